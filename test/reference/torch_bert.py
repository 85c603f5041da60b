"""Independent plain-PyTorch reference for Hugging Face `BertForSequenceClassification` training.

Rebuilds HF's eager BERT module for module (parameter names identical to HF checkpoints), trains
it with torch.optim.AdamW and the HF Trainer's parameter groups and schedules, and writes a
per-step loss log that bertc's generated trainer is compared against. Needs only torch.
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


class BertEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        # HF's summation order: (word + token_type) + position.
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(positions)
        return self.dropout(self.LayerNorm(embeddings))


class BertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

    def split_heads(self, x):
        """(B, S, hidden) -> (B, heads, S, head_dim)"""
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, hidden, additive_mask):
        query, key, value = (self.split_heads(proj(hidden)) for proj in (self.query, self.key, self.value))
        scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = self.dropout(torch.softmax(scores + additive_mask, dim=-1))
        context = torch.matmul(probs, value).permute(0, 2, 1, 3).contiguous()
        return context.view(hidden.shape)


class BertSelfOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden, residual):
        return self.LayerNorm(self.dropout(self.dense(hidden)) + residual)


class BertAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSelfOutput(config)

    def forward(self, hidden, additive_mask):
        return self.output(self.self(hidden, additive_mask), hidden)


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)

    def forward(self, hidden):
        return F.gelu(self.dense(hidden))  # exact erf GELU


class BertOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden, residual):
        return self.LayerNorm(self.dropout(self.dense(hidden)) + residual)


class BertLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden, additive_mask):
        attention_output = self.attention(hidden, additive_mask)
        return self.output(self.intermediate(attention_output), attention_output)


class BertEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))


class BertPooler(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden):
        return torch.tanh(self.dense(hidden[:, 0]))


class BertModel(nn.Module):
    """The pooler's output, or without a pooler (add_pooling_layer=False) the last hidden states."""
    def __init__(self, config, pooler=True):
        super().__init__()
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if pooler else None

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.hidden_states(input_ids, attention_mask, token_type_ids)[-1]
        return self.pooler(hidden) if self.pooler else hidden

    def hidden_states(self, input_ids, attention_mask, token_type_ids):
        """HF's output_hidden_states: the embeddings' output, then each layer's."""
        states = [self.embeddings(input_ids, token_type_ids)]
        # HF's extended mask: 0 where attended, finfo.min where padded, broadcast over heads and queries.
        dtype = states[0].dtype
        additive_mask = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
        for layer in self.encoder.layer:
            states.append(layer(states[-1], additive_mask))
        return states


class BertForSequenceClassification(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        dropout = config.hidden_dropout_prob if config.classifier_dropout is None else config.classifier_dropout
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask, token_type_ids):
        """Logits (B, num_labels)."""
        return self.classifier(self.dropout(self.bert(input_ids, attention_mask, token_type_ids)))


class BertForTransformHead(nn.Module):
    """A custom head as BertPredictionHeadTransform's, over [CLS] (or the real tokens' mean)
    without the pooler: dense, GELU (or ReLU), LayerNorm, then the labels' projection (bertc's
    [[head.layers]] select_token or mean, linear "dense", gelu or relu, layernorm "norm", linear
    "out"; parameters head.<name>.*)."""
    def __init__(self, config, width, activation, pooling):
        super().__init__()
        self.activation = {"gelu": F.gelu, "relu": F.relu}[activation]
        self.pooling = pooling
        self.bert = BertModel(config, pooler=False)
        self.head = nn.ModuleDict({
            "dense": nn.Linear(config.hidden_size, width),
            "norm": nn.LayerNorm(width, eps=config.layer_norm_eps),
            "out": nn.Linear(width, config.num_labels),
        })

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.bert(input_ids, attention_mask, token_type_ids)
        pooled = mean_pool(hidden, attention_mask) if self.pooling == "mean" else hidden[:, 0]
        return self.head["out"](self.head["norm"](self.activation(self.head["dense"](pooled))))


def mean_pool(hidden, attention_mask):
    """The mean of each row's real tokens, as sentence-transformers' mean pooling."""
    mask = attention_mask[..., None].to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)


def max_pool(hidden, attention_mask):
    """The maximum of each row's real tokens, as sentence-transformers' max pooling."""
    return hidden.masked_fill(attention_mask[..., None] == 0, float("-inf")).max(1).values


class BertForPoolingHead(nn.Module):
    """A custom head that reads the encoder's output three ways (test/e2e/Inputs/pooling-head.toml):
    [CLS], the mean and the maximum of the real tokens side by side, features [start, end) of
    them, a dense layer with its tanh added back, then the labels' projection (bertc's
    select_token, mean, max, concat, slice, linear "dense", tanh, add, linear "out")."""
    def __init__(self, config, width, features):
        super().__init__()
        self.features = slice(*features)
        self.bert = BertModel(config, pooler=False)
        self.head = nn.ModuleDict({
            "dense": nn.Linear(features[1] - features[0], width),
            "out": nn.Linear(width, config.num_labels),
        })

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.bert(input_ids, attention_mask, token_type_ids)
        pooled = torch.cat([hidden[:, 0], mean_pool(hidden, attention_mask),
                            max_pool(hidden, attention_mask)], -1)
        dense = self.head["dense"](pooled[:, self.features])
        return self.head["out"](dense + torch.tanh(dense))


class BertForLayersHead(nn.Module):
    """A custom head over the [CLS] token of every hidden state (test/e2e/Inputs/layers-head.toml):
    the embeddings' and each layer's side by side, then the labels' projection (bertc's
    select_token of "embeddings" and "encoder.layer.N", concat, linear "out")."""
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, pooler=False)
        states = config.num_hidden_layers + 1
        self.head = nn.ModuleDict({"out": nn.Linear(states * config.hidden_size, config.num_labels)})

    def forward(self, input_ids, attention_mask, token_type_ids):
        states = self.bert.hidden_states(input_ids, attention_mask, token_type_ids)
        return self.head["out"](torch.cat([state[:, 0] for state in states], -1))


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
            if name not in tensors:
                sys.exit(f"{path}: missing tensor {name}")
            tensor = tensors[name]
            if list(param.shape) != tensor.shape:
                sys.exit(f"{path}: {name} has shape {tensor.shape}, model expects {list(param.shape)}")
            param.copy_(torch.frombuffer(tensor.data, dtype=torch.float32).view(param.shape))
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
    elif args.layers_head:
        model = BertForLayersHead(config)
    elif args.pooling_head:
        model = BertForPoolingHead(config, args.pooling_head, args.head_slice)
    else:
        model = BertForSequenceClassification(config)
    load_parameters(model, args.init)
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
        save_parameters(model, args.save)


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
    parser.add_argument("--head-activation", choices=["gelu", "relu"], default="gelu",
                        help="the transform head's activation")
    parser.add_argument("--pooling-head", type=int, metavar="WIDTH",
                        help="train BertForPoolingHead (its dense layer this wide) instead")
    parser.add_argument("--layers-head", action="store_true",
                        help="train BertForLayersHead (over every hidden state's [CLS]) instead")
    parser.add_argument("--head-slice", type=int, nargs=2, metavar=("START", "END"), default=[40, 150],
                        help="the pooling head's slice of its joined features")
    parser.add_argument("--head-pooling", choices=["cls", "mean"], default="cls",
                        help="the transform head's input: [CLS], or the mean of the real tokens")
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
