"""Independent plain-PyTorch reference for Hugging Face causal-LM fine-tuning of Llama,
Mistral, Qwen2 and GPT-2.

Trains the model of torch_llama_model.py (Llama, Mistral, Qwen2) or torch_gpt2_model.py
(GPT-2), chosen by config.json's model_type, with torch.optim.AdamW, the HF Trainer's
parameter groups and schedules and its num_items_in_batch loss normalization, and writes a
per-step loss log that bertc's generated trainer is compared against. With --precision
bf16 or fp16 it trains as PyTorch's automatic mixed precision on a GPU would (CUDA
autocast's op policy, and for fp16 GradScaler's dynamic loss scaling), emulated on the CPU
by torch_amp.py. With --lora-targets it trains LoRA adapters on the frozen model instead
(torch_lora.py), starting from --lora-init's. Needs only torch.

QLoRA (--lora-base nf4 or int8, with --lora-targets; --double-quant with nf4): the frozen base
as bertc computes it. After load_parameters and before the adapters are added, every Linear
(GPT-2: Conv1D) weight inside the repeated transformer blocks (Llama, Qwen2, Mistral:
model.layers.N.self_attn.{q,k,v,o}_proj and model.layers.N.mlp.{gate,up,down}_proj; GPT-2:
transformer.h.N.attn.c_attn, attn.c_proj, mlp.c_fc and mlp.c_proj) is replaced by its
quantized-then-dequantized value (bnb_quant.py, bitsandbytes' arithmetic); the embeddings, the
LM head, the norms and every bias are left as loaded. Each weight is quantized from its fp32
values as a Linear's row-major [out, in] matrix (a Conv1D's [in, out] weight is transposed
first and back after): nf4 = quantize_4bit of the flattened values (blocks of 64;
compress_statistics with --double-quant) then dequantize_4bit, int8 = int8_vectorwise_quant
of the rows then int8_dequant, both dequantized in the precision's compute dtype (fp32, or
bf16 / fp16 for --precision bf16 / fp16) and stored back as the fp32 parameter, exactly. The
adapters freeze these weights as they freeze the whole base.
"""
import argparse
import array
import contextlib
import json
import sys
from types import SimpleNamespace

import torch

import bnb_quant
import torch_amp
import torch_gpt2_model
import torch_llama_model
import torch_lora
from safetensors_io import Tensor, write_safetensors
from torch_bert import load_parameters, make_scheduler, save_parameters

LLAMA_DEFAULTS = {  # transformers' LlamaConfig defaults
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": None, "hidden_act": "silu",
    "max_position_embeddings": 2048, "initializer_range": 0.02, "rms_norm_eps": 1e-6,
    "pad_token_id": None, "tie_word_embeddings": False, "rope_theta": 10000.0, "rope_scaling": None,
    "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False, "head_dim": None,
}
QWEN2_DEFAULTS = {**LLAMA_DEFAULTS, "vocab_size": 151936, "intermediate_size": 22016,
                  "max_position_embeddings": 32768}
GPT2_DEFAULTS = {  # transformers' GPT2Config defaults
    "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12,
    "n_inner": None, "activation_function": "gelu_new", "resid_pdrop": 0.1, "embd_pdrop": 0.1,
    "attn_pdrop": 0.1, "layer_norm_epsilon": 1e-5, "initializer_range": 0.02,
    "tie_word_embeddings": True, "pad_token_id": None,
}


def load_config(path):
    """config.json as a namespace with the derived fields the model reads, and the module
    that builds the model."""
    with open(path) as f:
        raw = json.load(f)
    model_type = raw.get("model_type")
    if model_type == "gpt2":
        return SimpleNamespace(**{**GPT2_DEFAULTS, **raw}), torch_gpt2_model
    if model_type not in ("llama", "mistral", "qwen2"):
        sys.exit(f"{path}: model_type must be llama, mistral, qwen2 or gpt2, got {model_type}")
    config = SimpleNamespace(**{**(QWEN2_DEFAULTS if model_type == "qwen2" else LLAMA_DEFAULTS), **raw})
    if config.hidden_act != "silu":
        sys.exit(f"{path}: only hidden_act 'silu' is supported")
    if config.num_key_value_heads is None:
        config.num_key_value_heads = config.num_attention_heads
    if config.head_dim is None:
        config.head_dim = config.hidden_size // config.num_attention_heads
    qwen2 = model_type == "qwen2"
    config.qkv_bias = True if qwen2 else config.attention_bias
    config.output_bias = False if qwen2 else config.attention_bias
    config.mlp_bias = False if qwen2 else config.mlp_bias
    return config, torch_llama_model


def read_rows(path, seq_len):
    """(input_ids, labels) per JSONL row, cut to seq_len; labels default to the ids."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                ids = row["input_ids"][:seq_len]
                rows.append((ids, row.get("labels", row["input_ids"])[:seq_len]))
    return rows


def make_batches(rows, batch_size, pad_id):
    """File order, `batch_size` rows each, padded to the batch's longest row: pad ids, mask
    0, labels -100; positions 0..seq-1 on every row."""
    batches = []
    for start in range(0, len(rows), batch_size):
        chunk = rows[start:start + batch_size]
        seq = max(len(ids) for ids, _ in chunk)
        pads = [seq - len(ids) for ids, _ in chunk]
        labels = torch.tensor([lab + [-100] * n for (_, lab), n in zip(chunk, pads)])
        batches.append({
            "input_ids": torch.tensor([ids + [pad_id] * n for (ids, _), n in zip(chunk, pads)]),
            "attention_mask": torch.tensor([[1] * len(ids) + [0] * n for (ids, _), n in zip(chunk, pads)]),
            "position_ids": torch.arange(seq).repeat(len(chunk), 1),
            "labels": labels,
            "num_items_in_batch": int((labels[:, 1:] != -100).sum()),
        })
    return batches


def parameter_groups(model, weight_decay):
    """The HF Trainer's groups: no decay for biases and the norms' weights (its
    ALL_LAYERNORM_LAYERS: LayerNorm and RMSNorm modules)."""
    norms = (torch.nn.LayerNorm, torch_llama_model.RMSNorm)
    no_decay_names = {f"{module_name}.{name}" if module_name else name
                      for module_name, module in model.named_modules() if isinstance(module, norms)
                      for name, _ in module.named_parameters(recurse=False)}
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (no_decay if "bias" in name or name in no_decay_names else decay).append(param)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def autocast(precision):
    """The forward's mixed-precision context: none for fp32, else emulated CUDA autocast."""
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch_amp.Autocast(torch_amp.DTYPES[precision])


def block_linears(model):
    """(name, module, transposed) of every Linear, or GPT-2 Conv1D (its weight [in, out]:
    transposed), inside the repeated transformer blocks: model.layers.N's projections, or
    transformer.h.N's c_attn, c_proj and c_fc. Not the embeddings or the LM head."""
    blocks = model.model.layers if hasattr(model, "model") else model.transformer.h
    prefix = "model.layers" if hasattr(model, "model") else "transformer.h"
    found = []
    for index, block in enumerate(blocks):
        for name, module in block.named_modules():
            transposed = type(module).__name__ == "Conv1D"
            if isinstance(module, torch.nn.Linear) or transposed:
                found.append((f"{prefix}.{index}.{name}", module, transposed))
    return found


def quantize_base(model, kind, double_quant, precision):
    """Replaces each block_linears weight by its `kind` (nf4 or int8) quantized-then-dequantized
    value, as bertc's QLoRA base holds it (see the module docstring): quantized from the fp32
    [out, in] matrix, dequantized in the compute dtype of `precision`, stored back as fp32 (the
    16-bit values are fp32 values). Biases, norms, embeddings and the LM head are untouched.
    Returns the names of the weights it replaced."""
    dtype = torch.float32 if precision == "fp32" else torch_amp.DTYPES[precision]
    nested_code = bnb_quant.create_dynamic_map() if double_quant else None
    names = []
    with torch.no_grad():
        for name, module, transposed in block_linears(model):
            weight = module.weight.detach().float()
            matrix = weight.t().contiguous() if transposed else weight  # [out, in]
            if kind == "nf4":
                packed, state = bnb_quant.quantize_4bit(matrix, double_quant, nested_code)
                values = bnb_quant.dequantize_4bit(packed, state, dtype)
            else:
                codes, row_absmax = bnb_quant.int8_vectorwise_quant(matrix)
                values = bnb_quant.int8_dequant(codes, row_absmax, dtype)
            values = values.float()
            module.weight.copy_(values.t() if transposed else values)
            names.append(name + ".weight")
    return names


def train(args, config, family):
    model = family.ForCausalLM(config)
    load_parameters(model, args.init)
    if args.lora_targets:
        # QLoRA: the base's block weights quantized then dequantized, before the adapters.
        quantized = (quantize_base(model, args.lora_base, args.double_quant, args.precision)
                     if args.lora_base else [])
        if args.save_base:
            save_parameters(model, args.save_base)
        torch_lora.add_adapters(model, args.lora_targets.split(","), args.lora_r, args.lora_alpha,
                                use_rslora=args.lora_rslora)
        torch_lora.load_adapters(model, args.lora_init)
        # add_adapters froze the base; a wrapped layer's weight is now under .base_layer.
        trainable = {name.replace(".base_layer.", ".") for name, param in model.named_parameters()
                     if param.requires_grad}
        assert not trainable & set(quantized), "a quantized base weight would train"
    pad_id = config.pad_token_id if config.pad_token_id is not None else 0
    batches = make_batches(read_rows(args.data, args.seq_len), args.batch, pad_id)
    optimizer = torch.optim.AdamW(parameter_groups(model, args.weight_decay), lr=args.lr,
                                  betas=tuple(args.betas), eps=args.eps)
    scheduler = make_scheduler(optimizer, args.schedule, args.warmup, args.steps)
    # With fp16, the HF Trainer's AMP step: scaled backward, unscale, clip, a step that
    # GradScaler may skip, and the scheduler stepped only after a step that ran.
    scaler = torch_amp.GradScaler() if args.precision == "fp16" else None
    skipped_steps = 0
    model.train()
    with open(args.log, "w") as log:
        for step in range(1, args.steps + 1):
            batch = batches[(step - 1) % len(batches)]
            with autocast(args.precision):
                logits = model(batch["input_ids"], batch["attention_mask"], batch["position_ids"])
                loss = torch_llama_model.causal_lm_loss(logits, batch["labels"],
                                                        max(batch["num_items_in_batch"], 1))
            optimizer.zero_grad()
            (scaler.scale(loss) if scaler else loss).backward()
            if scaler:
                scaler.unscale_(optimizer)
            if args.max_grad_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            if scaler:
                ran = scaler.step(optimizer)
                scaler.update()
                skipped_steps += not ran
            else:
                optimizer.step()
                ran = True
            if ran:
                scheduler.step()
            record = {"step": step, "loss": loss.item()}
            if scaler:
                record.update(loss_scale=scaler.scale_value, skipped_steps=skipped_steps)
            line = json.dumps(record)
            log.write(line + "\n")
            print(line)
    if args.save:
        (torch_lora.save_adapters if args.lora_targets else save_parameters)(model, args.save)


def make_init(args, config, family):
    """A fresh model with HF's initialisation under torch.manual_seed(args.seed). With
    --gpt2-model-names, as the original GPT-2 checkpoints hold it: GPT2Model's names (no
    "transformer." prefix) and each layer's causal-mask buffers .attn.bias and
    .attn.masked_bias beside the parameters."""
    torch.manual_seed(args.seed)
    model = family.ForCausalLM(config)
    family.init_weights(model, config)
    if not args.gpt2_model_names:
        save_parameters(model, args.make_init)
        return
    tensors = {}
    for name, param in model.transformer.named_parameters():
        tensors[name] = Tensor(list(param.shape), array.array("f", param.detach().flatten().tolist()))
    n = config.n_positions
    for layer in range(config.n_layer):
        mask = torch.ones(n, n).tril().view(1, 1, n, n)
        tensors[f"h.{layer}.attn.bias"] = Tensor(list(mask.shape), array.array("f", mask.flatten().tolist()))
        tensors[f"h.{layer}.attn.masked_bias"] = Tensor([], array.array("f", [-1e4]))
    write_safetensors(args.make_init, tensors, metadata={"format": "pt"})


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="Defaults are those of HF TrainingArguments.")
    parser.add_argument("--config", required=True,
                        help="HF config.json (LlamaConfig, Qwen2Config or GPT2Config keys)")
    parser.add_argument("--make-init", metavar="OUT", help="write a random HF-style init to OUT and exit")
    parser.add_argument("--seed", type=int, default=42, help="init seed with --make-init")
    parser.add_argument("--gpt2-model-names", action="store_true",
                        help="with --make-init, GPT-2's original checkpoint layout (see make_init)")
    parser.add_argument("--init", help="safetensors to start training from")
    parser.add_argument("--data", help="pre-tokenized JSONL: input_ids, optional labels")
    parser.add_argument("--seq-len", type=int, default=1 << 30, help="rows are cut to this many tokens")
    parser.add_argument("--batch", type=int, default=8, help="rows per optimizer step")
    parser.add_argument("--steps", type=int, help="optimizer steps; epochs repeat the file")
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--betas", type=float, nargs=2, default=[0.9, 0.999])
    parser.add_argument("--eps", type=float, default=1e-8)
    parser.add_argument("--schedule", choices=["linear", "constant"], default="linear")
    parser.add_argument("--warmup", type=float, default=0.0, help="warmup fraction of --steps (linear only)")
    parser.add_argument("--max-grad-norm", type=float, default=0.0, help="clip the global gradient norm; 0 = off")
    parser.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default="fp32",
                        help="fp32, or automatic mixed precision in bf16 or fp16 (torch_amp.py)")
    parser.add_argument("--lora-targets", help="comma-separated layer names to train LoRA adapters on")
    parser.add_argument("--lora-r", type=int, default=8)
    parser.add_argument("--lora-alpha", type=float, default=8.0)
    parser.add_argument("--lora-rslora", action="store_true", help="scaling alpha / sqrt(r)")
    parser.add_argument("--lora-init", help="adapter_model.safetensors the adapters start from")
    parser.add_argument("--lora-base", choices=["nf4", "int8"],
                        help="QLoRA: the blocks' linear weights quantized then dequantized, as "
                             "bitsandbytes does (see the module docstring); absent: as loaded")
    parser.add_argument("--double-quant", action="store_true",
                        help="with --lora-base nf4, quantize the absmaxes too (compress_statistics)")
    parser.add_argument("--save-base", metavar="OUT",
                        help="with --lora-targets, write the frozen base the adapters train on "
                             "(with --lora-base, its weights as the GEMMs read them) to OUT")
    parser.add_argument("--log", help="JSONL metrics log, one {step, loss} line per optimizer step")
    parser.add_argument("--save", help="safetensors for the trained parameters")
    args = parser.parse_args(argv)
    if not args.make_init and None in (args.init, args.data, args.steps, args.log):
        parser.error("training needs --init, --data, --steps and --log (or use --make-init)")
    if args.lora_targets and not args.lora_init:
        parser.error("--lora-targets needs --lora-init")
    if args.lora_base and not args.lora_targets:
        parser.error("--lora-base needs --lora-targets (it quantizes the frozen base of LoRA training)")
    if args.double_quant and args.lora_base != "nf4":
        parser.error("--double-quant needs --lora-base nf4")
    return args


def main(argv):
    args = parse_args(argv)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    config, family = load_config(args.config)
    if args.make_init:
        make_init(args, config, family)
    else:
        train(args, config, family)


if __name__ == "__main__":
    main(sys.argv[1:])
