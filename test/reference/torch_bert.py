"""Independent plain-PyTorch reference for Hugging Face `BertForSequenceClassification` training.

Trains HF's eager BERT, rebuilt module for module in torch_bert_model.py, with
torch.optim.AdamW and the HF Trainer's parameter groups and schedules, and writes a per-step
loss log that bertc's generated trainer is compared against. With --lora-targets it trains
LoRA adapters and the classifier on the frozen encoder instead (torch_lora.py). Needs only
torch.
"""
import argparse
import array
import json
import math
import sys
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import nn

from safetensors_io import Tensor, read_safetensors, write_safetensors
from torch_bert_model import (BertForLayersHead, BertForPoolingHead, BertForSequenceClassification,
                              BertForTransformHead)
import torch_lora

CONFIG_DEFAULTS = {  # HF BertConfig defaults
    "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 512, "type_vocab_size": 2,
    "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0,
    "position_embedding_type": "absolute", "classifier_dropout": None, "num_labels": 2,
}


def load_config(path):
    """HF config.json as a namespace; num_labels falls back to len(id2label) as in HF."""
    with open(path) as f:
        raw = json.load(f)
    if "num_labels" not in raw and "id2label" in raw:
        raw["num_labels"] = len(raw["id2label"])
    config = SimpleNamespace(**{**CONFIG_DEFAULTS, **raw})
    if config.hidden_act != "gelu" or config.position_embedding_type != "absolute":
        sys.exit(f"{path}: only hidden_act 'gelu' and absolute position embeddings are supported")
    if config.hidden_size % config.num_attention_heads or config.num_labels < 2:
        sys.exit(f"{path}: need hidden_size divisible by num_attention_heads and num_labels >= 2")
    return config


def classification_loss(logits, labels):
    """Mean cross-entropy over the batch, as HF's single_label_classification."""
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))


def init_weights(model, config):
    """HF BertPreTrainedModel._init_weights, applied children-first like PreTrainedModel.post_init."""
    def init_module(module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=config.initializer_range)
            module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=config.initializer_range)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)
    model.apply(init_module)


def save_parameters(model, path):
    """All parameters as F32 safetensors under their HF names."""
    tensors = {}
    for name, param in model.named_parameters():
        values = array.array("f")
        values.frombytes(param.detach().cpu().float().contiguous().numpy().tobytes())
        tensors[name] = Tensor(list(param.shape), values)
    write_safetensors(path, tensors, metadata={"format": "pt"})


def load_parameters(model, path):
    """Copy every model parameter from `path`; missing names or wrong shapes are fatal."""
    tensors = read_safetensors(path)
    with torch.no_grad():
        for name, param in model.named_parameters():
            torch_lora.copy_tensor(param, tensors, name, path)
    unused = sorted(set(tensors) - {name for name, _ in model.named_parameters()})
    if unused:
        print(f"{path}: ignoring {len(unused)} tensors not in the model, e.g. {unused[0]}", file=sys.stderr)


def read_rows(path, config):
    """(input_ids, token_type_ids, label) per JSONL row; token_type_ids default to zeros, and an
    attention_mask (1s, then 0s) drops the padding it marks, as bertc reads such rows."""
    rows = []
    with open(path) as f:
        for line_number, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            input_ids = row["input_ids"]
            token_type_ids = row.get("token_type_ids", [0] * len(input_ids))
            if "attention_mask" in row:
                attended = row["attention_mask"].count(1)
                if row["attention_mask"] != [1] * attended + [0] * (len(input_ids) - attended):
                    sys.exit(f"{path}:{line_number}: attention_mask must be 1s then 0s, as long as input_ids")
                input_ids, token_type_ids = input_ids[:attended], token_type_ids[:attended]
            if len(token_type_ids) != len(input_ids) or not 0 < len(input_ids) <= config.max_position_embeddings:
                sys.exit(f"{path}:{line_number}: need 1..{config.max_position_embeddings} input_ids and as many token_type_ids")
            rows.append((input_ids, token_type_ids, int(row["label"])))
    return rows


def make_batches(rows, batch_size, pad_id):
    """File order, `batch_size` rows each (the last may be short), padded to the batch's longest row."""
    batches = []
    for start in range(0, len(rows), batch_size):
        chunk = rows[start:start + batch_size]
        seq_len = max(len(ids) for ids, _, _ in chunk)
        pad = [seq_len - len(ids) for ids, _, _ in chunk]
        batches.append({
            "input_ids": torch.tensor([ids + [pad_id] * n for (ids, _, _), n in zip(chunk, pad)]),
            "token_type_ids": torch.tensor([types + [0] * n for (_, types, _), n in zip(chunk, pad)]),
            "attention_mask": torch.tensor([[1] * len(ids) + [0] * n for (ids, _, _), n in zip(chunk, pad)]),
            "labels": torch.tensor([label for _, _, label in chunk]),
        })
    return batches


def parameter_groups(model, weight_decay):
    """The HF Trainer's groups: no decay for biases and LayerNorm weights, `weight_decay` for the rest."""
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        layer_norm = "LayerNorm.weight" in name or name.startswith("head.norm.")
        (no_decay if "bias" in name or layer_norm else decay).append(param)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def make_scheduler(optimizer, schedule, warmup_ratio, total_steps):
    """HF get_constant_schedule (warmup ignored, as HF's get_scheduler does) or
    get_linear_schedule_with_warmup with ceil(warmup_ratio * total_steps) warmup steps."""
    if schedule == "constant":
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    warmup_steps = math.ceil(warmup_ratio * total_steps)

    def linear(current_step):
        if current_step < warmup_steps:
            return float(current_step) / float(max(1, warmup_steps))
        return max(0.0, float(total_steps - current_step) / float(max(1, total_steps - warmup_steps)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, linear)


def train(args, config):
    """Run args.steps optimizer steps over the data, cycling epochs; log the loss of each step."""
    if args.transform_head:
        model = BertForTransformHead(config, args.transform_head, args.head_activation,
                                     args.head_pooling)
    elif args.layers_head is not None:
        model = BertForLayersHead(config, args.layers_head)
    elif args.pooling_head:
        model = BertForPoolingHead(config, args.pooling_head, args.head_slice)
    else:
        model = BertForSequenceClassification(config)
    load_parameters(model, args.init)
    if args.lora_targets:
        # The classification head trains whole beside the adapters, as PEFT's SEQ_CLS does.
        torch_lora.add_adapters(model, args.lora_targets.split(","), args.lora_r, args.lora_alpha,
                                head_modules=("classifier",))
        torch_lora.load_adapters(model, args.lora_init)
    batches = make_batches(read_rows(args.data, config), args.batch, config.pad_token_id)
    optimizer = torch.optim.AdamW(parameter_groups(model, args.weight_decay), lr=args.lr,
                                  betas=tuple(args.betas), eps=args.eps)
    scheduler = make_scheduler(optimizer, args.schedule, args.warmup, args.steps)
    torch.manual_seed(args.seed)  # dropout masks, when dropout is on
    model.train()
    with open(args.log, "w") as log:
        for step in range(1, args.steps + 1):
            batch = batches[(step - 1) % len(batches)]
            logits = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
            loss = classification_loss(logits, batch["labels"])
            optimizer.zero_grad()
            loss.backward()
            if args.max_grad_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            scheduler.step()
            line = json.dumps({"step": step, "loss": loss.item()})
            log.write(line + "\n")
            print(line)
    if args.save:
        (torch_lora.save_adapters if args.lora_targets else save_parameters)(model, args.save)


def make_init(args, config):
    """A fresh model with HF's initialisation under torch.manual_seed(args.seed)."""
    torch.manual_seed(args.seed)
    model = BertForSequenceClassification(config)
    init_weights(model, config)
    save_parameters(model, args.make_init)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="Defaults are those of HF TrainingArguments.")
    parser.add_argument("--config", required=True, help="HF config.json (BertConfig keys)")
    parser.add_argument("--make-init", metavar="OUT", help="write a random HF-style init to OUT and exit")
    parser.add_argument("--seed", type=int, default=42, help="init seed with --make-init, else dropout seed")
    parser.add_argument("--init", help="safetensors to start training from")
    parser.add_argument("--data", help="pre-tokenized JSONL: input_ids, token_type_ids, label")
    parser.add_argument("--batch", type=int, default=8, help="rows per optimizer step")
    parser.add_argument("--steps", type=int, help="optimizer steps; epochs repeat the file")
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--betas", type=float, nargs=2, default=[0.9, 0.999])
    parser.add_argument("--eps", type=float, default=1e-8)
    parser.add_argument("--schedule", choices=["linear", "constant"], default="linear")
    parser.add_argument("--warmup", type=float, default=0.0, help="warmup fraction of --steps (linear only)")
    parser.add_argument("--max-grad-norm", type=float, default=0.0,
                        help="clip the global gradient norm; 0 = off (the HF Trainer default is 1.0)")
    parser.add_argument("--transform-head", type=int, metavar="WIDTH",
                        help="train BertForTransformHead (a custom head of this width) instead")
    parser.add_argument("--head-activation", choices=["gelu", "gelu_tanh", "relu"], default="gelu",
                        help="the transform head's activation")
    parser.add_argument("--pooling-head", type=int, metavar="WIDTH",
                        help="train BertForPoolingHead (its dense layer this wide) instead")
    parser.add_argument("--layers-head", type=int, nargs="?", const=0, metavar="STATES",
                        help="train BertForLayersHead (over the [CLS] of the first STATES hidden "
                             "states, default every one) instead")
    parser.add_argument("--head-slice", type=int, nargs=2, metavar=("START", "END"), default=[40, 150],
                        help="the pooling head's slice of its joined features")
    parser.add_argument("--head-pooling", choices=["cls", "mean"], default="cls",
                        help="the transform head's input: [CLS], or the mean of the real tokens")
    parser.add_argument("--lora-targets", help="comma-separated layer names to train LoRA adapters on")
    parser.add_argument("--lora-r", type=int, default=8)
    parser.add_argument("--lora-alpha", type=float, default=8.0)
    parser.add_argument("--lora-init", help="adapter_model.safetensors the adapters (and head) start from")
    parser.add_argument("--log", help="JSONL metrics log, one {step, loss} line per optimizer step")
    parser.add_argument("--save", help="safetensors for the trained parameters")
    args = parser.parse_args(argv)
    if not args.make_init and None in (args.init, args.data, args.steps, args.log):
        parser.error("training needs --init, --data, --steps and --log (or use --make-init)")
    return args


def main(argv):
    args = parse_args(argv)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    config = load_config(args.config)
    if args.make_init:
        make_init(args, config)
    else:
        train(args, config)


if __name__ == "__main__":
    main(sys.argv[1:])
