"""PEFT's LoRA on a plain-PyTorch model, written from PEFT's published design (peft/tuners/lora):
each targeted linear layer becomes the frozen layer plus lora_B(lora_A(dropout(x))) * scaling,
lora_A [r, in] and lora_B [out, r] without biases, scaling alpha / r (alpha / sqrt(r) with
rsLoRA). Every other parameter is frozen but the task head's (PEFT's modules_to_save). The
trainable tensors are named as adapter_model.safetensors names them:
base_model.model.<module>.lora_A.weight. Needs only torch.
"""
import array
import math
import sys

import torch
from torch import nn

from safetensors_io import Tensor, read_safetensors, write_safetensors

ADAPTER_PREFIX = "base_model.model."


class LoraLinear(nn.Module):
    """A linear layer (nn.Linear, or GPT-2's Conv1D with its [in, out] weight) and its adapter."""

    def __init__(self, base_layer, r, alpha, dropout, use_rslora):
        super().__init__()
        weight = base_layer.weight
        transposed = type(base_layer).__name__ == "Conv1D"
        in_features, out_features = (weight.shape[0], weight.shape[1]) if transposed else (weight.shape[1], weight.shape[0])
        self.base_layer = base_layer
        self.lora_A = nn.Linear(in_features, r, bias=False)
        self.lora_B = nn.Linear(r, out_features, bias=False)
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.scaling = alpha / (math.sqrt(r) if use_rslora else r)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling


def targeted(name, targets):
    return any(name == t or name.endswith("." + t) for t in targets)


def add_adapters(model, targets, r, alpha, dropout=0.0, use_rslora=False, head_modules=()):
    """Freezes `model` but its `head_modules` and wraps each targeted linear layer."""
    for param in model.parameters():
        param.requires_grad_(False)
    wrapped = []
    for name, module in list(model.named_modules()):
        is_linear = isinstance(module, nn.Linear) or type(module).__name__ == "Conv1D"
        if not is_linear or not targeted(name, targets) or name.split(".")[0] in head_modules:
            continue
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, LoraLinear(module, r, alpha, dropout, use_rslora))
        wrapped.append(name)
    if not wrapped:
        sys.exit(f"no layer matches the targets {targets}")
    for head in head_modules:
        for param in model.get_submodule(head).parameters():
            param.requires_grad_(True)
    return wrapped


def adapter_name(name):
    """A trainable parameter's name in adapter_model.safetensors (the wrapper's base_layer
    is not among them)."""
    return ADAPTER_PREFIX + name


def copy_tensor(param, tensors, key, path):
    """Sets `param` to tensor `key` of `tensors` (read from `path`); a missing name or another
    shape is fatal."""
    if key not in tensors:
        sys.exit(f"{path}: missing tensor {key}")
    tensor = tensors[key]
    if list(param.shape) != tensor.shape:
        sys.exit(f"{path}: {key} has shape {tensor.shape}, model expects {list(param.shape)}")
    param.copy_(torch.frombuffer(tensor.data, dtype=torch.float32).view(param.shape))


def load_adapters(model, path):
    """Sets every trainable parameter from `path` (adapter_model.safetensors names)."""
    tensors = read_safetensors(path)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if not param.requires_grad:
                continue
            copy_tensor(param, tensors, adapter_name(name), path)


def save_adapters(model, path):
    """The trainable parameters, as adapter_model.safetensors names them."""
    tensors = {}
    for name, param in model.named_parameters():
        if param.requires_grad:
            values = array.array("f")
            values.frombytes(param.detach().float().contiguous().numpy().tobytes())
            tensors[adapter_name(name)] = Tensor(list(param.shape), values)
    write_safetensors(path, tensors, metadata={"format": "pt"})
