"""Random Llama weights for benchmarks: a LlamaForCausalLM state dict as a BF16 safetensors
file, written from a config.json with the Python 3 standard library, deterministic from a
seed, and read back into PyTorch through mmap (causal_lm_step.py gives both trainers the file).

The values: normal(0, initializer_range) for the matrices and the embedding, ones for the
RMSNorm weights, as transformers' _init_weights draws them. Drawing 1.24 billion values one
by one would take Python minutes, so INIT_BLOCK values are drawn once and each tensor repeats
them from a start of its own; the block's length is odd, so no two rows of a matrix whose
width is a power of two start at the same value.
"""
import array
import json
import math
import mmap
import random
import struct
import sys

INIT_BLOCK = 1_000_003  # values drawn one by one
ONE_BF16 = struct.pack("<H", 0x3F80)  # 1.0 in bfloat16


def llama_parameters(config):
    """[(name, shape, kind)] of a LlamaForCausalLM's state dict as transformers saves it (a
    tied LM head once, as the embedding), kind "normal" or "ones"; exits on a config that is
    not a Llama without biases."""
    if config.get("model_type") != "llama" or config.get("attention_bias") or \
            config.get("mlp_bias") or config.get("hidden_act", "silu") != "silu":
        sys.exit("bench: the config must be a Llama (model_type llama, silu, no biases)")
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads") or heads
    head_dim = config.get("head_dim") or hidden // heads
    vocab = config["vocab_size"]
    params = [("model.embed_tokens.weight", [vocab, hidden], "normal")]
    for layer in range(config["num_hidden_layers"]):
        prefix = f"model.layers.{layer}."
        params += [(prefix + "input_layernorm.weight", [hidden], "ones"),
                   (prefix + "self_attn.q_proj.weight", [heads * head_dim, hidden], "normal"),
                   (prefix + "self_attn.k_proj.weight", [kv_heads * head_dim, hidden], "normal"),
                   (prefix + "self_attn.v_proj.weight", [kv_heads * head_dim, hidden], "normal"),
                   (prefix + "self_attn.o_proj.weight", [hidden, heads * head_dim], "normal"),
                   (prefix + "post_attention_layernorm.weight", [hidden], "ones"),
                   (prefix + "mlp.gate_proj.weight", [inner, hidden], "normal"),
                   (prefix + "mlp.up_proj.weight", [inner, hidden], "normal"),
                   (prefix + "mlp.down_proj.weight", [hidden, inner], "normal")]
    params.append(("model.norm.weight", [hidden], "ones"))
    if not config.get("tie_word_embeddings", False):
        params.append(("lm_head.weight", [vocab, hidden], "normal"))
    return params


def bf16_bytes(values):
    """An array('f')'s values as little-endian bfloat16 bytes (the upper half of each float,
    rounded toward zero)."""
    if sys.byteorder != "little":
        values = array.array("f", values)
        values.byteswap()
    raw = values.tobytes()
    out = bytearray(len(raw) // 2)
    out[0::2] = raw[2::4]
    out[1::2] = raw[3::4]
    return bytes(out)


def write_cyclic(file, block, start, count):
    """Writes `count` bfloat16 values of `block` (bytes) to `file`, from value `start` on,
    going round to the block's start as often as needed."""
    view = memoryview(block)
    position, left = 2 * start, 2 * count
    while left:
        piece = view[position:position + left]
        file.write(piece)
        left -= len(piece)
        position = 0


def write_init(path, config, seed):
    """Writes the random LlamaForCausalLM of `config` (a config.json dict) to `path` as a
    BF16 safetensors file; returns its parameter count."""
    rng = random.Random(seed)
    std = config.get("initializer_range", 0.02)
    block = bf16_bytes(array.array("f", (rng.gauss(0.0, std) for _ in range(INIT_BLOCK))))
    params = llama_parameters(config)
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape, _ in params:
        size = 2 * math.prod(shape)
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # the data 8-byte aligned, as safetensors' writer pads
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(text)) + text)
        for index, (_, shape, kind) in enumerate(params):
            count = math.prod(shape)
            if kind == "ones":
                file.write(ONE_BF16 * count)
            else:
                write_cyclic(file, block, index * 7919 % INIT_BLOCK, count)
    return sum(math.prod(shape) for _, shape, _ in params)


def load_init(model, path, tied):
    """Copies the BF16 safetensors file at `path` into `model`'s parameters (a torch module
    whose state dict has the file's names; with `tied`, lm_head.weight is the embedding's and
    not in the file); exits when the names differ."""
    import torch

    with open(path, "rb") as file:
        size = struct.unpack("<Q", file.read(8))[0]
        header = json.loads(file.read(size))
        # Copy-on-write: torch.frombuffer wants a writable buffer; nothing writes to it.
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_COPY)
    header.pop("__metadata__", None)
    state = model.state_dict()
    missing = set(state) - set(header) - ({"lm_head.weight"} if tied else set())
    unexpected = set(header) - set(state)
    if missing or unexpected:
        sys.exit(f"bench: {path} and the PyTorch model differ: missing {sorted(missing)[:5]}, "
                 f"unexpected {sorted(unexpected)[:5]}")
    with torch.no_grad():
        for name, entry in header.items():
            begin, end = entry["data_offsets"]
            values = torch.frombuffer(mapped, dtype=torch.bfloat16, count=(end - begin) // 2,
                                      offset=8 + size + begin)
            state[name].copy_(values.view(entry["shape"]))
