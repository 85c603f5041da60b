"""Self-checks of the PyTorch reference itself, cheap enough to run anywhere (a few seconds, CPU).

1. the module tree yields exactly the HF BertForSequenceClassification parameter names;
2. safetensors_io reads back what it wrote (F32) and decodes hand-made BF16 and F16 files;
3. autograd's gradient of the loss matches finite differences (gradcheck, double precision);
4. padding a row inside a batch leaves its logits unchanged;
5. torch_amp's emulated autocast: a bf16 linear as torch's own CPU autocast computes it
   (within one bf16 rounding), gradients that reach 16-bit tensors rounded, and the op
   policy's fp32 and promoted results;
6. torch_amp's GradScaler skips an overflowing step and halves the scale, and doubles it
   after growth_interval steps that ran.
"""
import argparse
import array
import json
import os
import struct
import sys
import tempfile
from types import SimpleNamespace

import torch

import torch_amp
import torch_bert
from safetensors_io import Tensor, read_safetensors, write_safetensors

LAYER_PARAMETERS = [
    "attention.self.query.weight", "attention.self.query.bias",
    "attention.self.key.weight", "attention.self.key.bias",
    "attention.self.value.weight", "attention.self.value.bias",
    "attention.output.dense.weight", "attention.output.dense.bias",
    "attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
    "intermediate.dense.weight", "intermediate.dense.bias",
    "output.dense.weight", "output.dense.bias",
    "output.LayerNorm.weight", "output.LayerNorm.bias",
]


def expected_parameter_names(num_layers):
    """HF's names, in HF's registration order."""
    embeddings = [f"bert.embeddings.{name}" for name in (
        "word_embeddings.weight", "position_embeddings.weight", "token_type_embeddings.weight",
        "LayerNorm.weight", "LayerNorm.bias")]
    layers = [f"bert.encoder.layer.{i}.{name}" for i in range(num_layers) for name in LAYER_PARAMETERS]
    head = ["bert.pooler.dense.weight", "bert.pooler.dense.bias", "classifier.weight", "classifier.bias"]
    return embeddings + layers + head


def tiny_config(**overrides):
    config = {**torch_bert.CONFIG_DEFAULTS, "vocab_size": 12, "hidden_size": 8, "num_hidden_layers": 2,
              "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 8,
              "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    return SimpleNamespace(**{**config, **overrides})


def check_parameter_names(verbose):
    model = torch_bert.BertForSequenceClassification(tiny_config())
    names = [name for name, _ in model.named_parameters()]
    if verbose:
        print("\n".join(names))
    assert names == expected_parameter_names(2), "parameter names differ from HF's"


def write_raw_safetensors(path, name, dtype, shape, raw):
    header = json.dumps({name: {"dtype": dtype, "shape": shape, "data_offsets": [0, len(raw)]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + raw)


def check_safetensors(directory):
    path = os.path.join(directory, "roundtrip.safetensors")
    written = {"b": Tensor([3], array.array("f", [1.5, -2.0, 1e-30])),
               "a": Tensor([2, 2], array.array("f", [0.0, -0.0, 3.25, float("inf")]))}
    write_safetensors(path, written, metadata={"format": "pt"})
    assert read_safetensors(path) == written, "F32 round trip changed the tensors"
    assert os.listdir(directory) == ["roundtrip.safetensors"], "atomic write left a temporary file"
    values = [1.0, -2.5, 0.15625, 65504.0]
    write_raw_safetensors(path, "h", "F16", [4], struct.pack("<4e", *values))
    assert list(read_safetensors(path)["h"].data) == values, "F16 decode"
    bf16 = struct.pack("<4H", *(struct.unpack("<I", struct.pack("<f", v))[0] >> 16 for v in values[:3] + [-3.0]))
    write_raw_safetensors(path, "b", "BF16", [2, 2], bf16)
    assert list(read_safetensors(path)["b"].data) == values[:3] + [-3.0], "BF16 decode"


def tiny_batch(config):
    """Two rows of lengths 5 and 3 padded to 5, with both token types."""
    rows = [([1, 7, 2, 9, 2], [0, 0, 0, 1, 1], 1), ([1, 4, 2], [0, 0, 0], 0)]
    return torch_bert.make_batches(rows, 2, config.pad_token_id)[0]


def check_gradient():
    torch.manual_seed(0)
    config = tiny_config(initializer_range=0.5)  # large weights so every term of the gradient matters
    model = torch_bert.BertForSequenceClassification(config).double()
    torch_bert.init_weights(model, config)
    batch = tiny_batch(config)
    name = "bert.encoder.layer.0.attention.self.query.weight"
    others = {n: p.detach() for n, p in model.named_parameters() if n != name}

    def loss_of(query_weight):
        logits = torch.nn.utils.stateless.functional_call(
            model, {**others, name: query_weight},
            (batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]))
        return torch_bert.classification_loss(logits, batch["labels"])
    weight = dict(model.named_parameters())[name].detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(loss_of, (weight,), eps=1e-6, atol=1e-7, rtol=1e-5)


def check_padding_invariance():
    torch.manual_seed(0)
    config = tiny_config()
    model = torch_bert.BertForSequenceClassification(config)
    torch_bert.init_weights(model, config)
    batch = tiny_batch(config)
    padded = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])[1]
    alone = model(batch["input_ids"][1:, :3], batch["attention_mask"][1:, :3], batch["token_type_ids"][1:, :3])[0]
    assert torch.allclose(padded, alone, rtol=1e-6, atol=1e-7), f"padding changed logits: {padded} vs {alone}"


def representable(tensor, dtype):
    return torch.equal(tensor, tensor.to(dtype).float())


def check_autocast():
    torch.manual_seed(0)
    x = torch.randn(16, 64, requires_grad=True)
    weight, bias = torch.randn(32, 64, requires_grad=True), torch.randn(32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        native = torch.nn.functional.linear(x, weight, bias).float()
    with torch_amp.Autocast(torch.bfloat16):
        emulated = torch.nn.functional.linear(x, weight, bias)
        scaled = emulated * 0.5
        promoted = emulated * torch.ones(32)
        probabilities = torch.softmax(emulated, dim=-1)
        loss = (scaled.float() * torch.linspace(-1, 1, 32)).sum()
    assert torch.allclose(emulated, native, rtol=2.0 ** -8, atol=0), "bf16 linear differs from autocast's"
    assert representable(emulated, torch.bfloat16) and representable(scaled, torch.bfloat16)
    assert getattr(scaled, "amp_lower_precision", False), "16-bit times a scalar stays 16-bit"
    assert not getattr(promoted, "amp_lower_precision", False), "16-bit times fp32 is fp32"
    assert not getattr(probabilities, "amp_lower_precision", False), "softmax runs in fp32"
    assert not representable(probabilities, torch.bfloat16), "softmax's result is not rounded"
    loss.backward()
    assert representable(x.grad, torch.bfloat16) and representable(weight.grad, torch.bfloat16), \
        "gradients of autocast's 16-bit copies are 16-bit"
    with torch_amp.Autocast(torch.float16):
        overflowed = torch.nn.functional.linear(torch.full((1, 2), 300.0), torch.full((1, 2), 300.0))
    assert torch.isinf(overflowed).all(), "fp16 results beyond 65504 overflow"


def check_grad_scaler():
    param = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([param], lr=1.0)
    scaler = torch_amp.GradScaler(growth_interval=2)
    ran = []
    for gradient in (float("inf"), 1.0, 1.0, 1.0):
        param.grad = torch.full((2,), gradient * scaler.scale_value)
        ran.append(scaler.step(optimizer))
        scaler.update()
    assert ran == [False, True, True, True], ran
    assert scaler.scale_value == 2.0 ** 16, scaler.scale_value  # halved, then doubled
    assert torch.equal(param.detach(), torch.full((2,), -2.0)), "unscaled gradients of 1, three steps"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print-names", action="store_true", help="print the model's parameter names")
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    check_parameter_names(args.print_names)
    with tempfile.TemporaryDirectory() as directory:
        check_safetensors(directory)
    check_gradient()
    check_padding_invariance()
    check_autocast()
    check_grad_scaler()
    print("reference self-check: ok")


if __name__ == "__main__":
    main(sys.argv[1:])
