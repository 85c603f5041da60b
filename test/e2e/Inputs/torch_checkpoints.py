"""PyTorch checkpoints of a safetensors file's tensors, written by torch.save itself, and the
check of what a trainer loaded from them.

  make SRC OUTDIR   writes OUTDIR/{zip,legacy,views,f16,bf16}/pytorch_model.bin:
                    zip     torch.save's format since 1.6, fp32
                    legacy  the older format (_use_new_zipfile_serialization=False)
                    views   every matrix a transposed view of its own transpose (strides
                            (1, rows)), every vector a slice of a longer storage (an offset),
                            the word embeddings shared with a tied decoder weight, and an
                            int64 position_ids buffer, as older transformers saved it
                    f16     every tensor in fp16, bf16 every tensor in bf16
                    p4      pickle protocol 4 (STACK_GLOBAL, frames), p4legacy the same
                            in the older format
                    nested  a training script's checkpoint: {"model": state_dict,
                            "epoch": 3}
                    extras  with a complex64 tensor, a 0-dim one and an empty one, which
                            the model does not use
  evil OUT FLAG     writes OUT: a torch.save file whose pickle would run `touch FLAG`
  module OUT        writes OUT: torch.save of a whole nn.Module, not its state dict
  check SAVED SRC ROUND
                    whether SAVED holds SRC's tensors, each rounded to ROUND (none, f16,
                    bf16) and widened back, bit for bit; prints the count or exits 1
Runs under an interpreter with torch (/usr/bin/python3 here)."""
import collections
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from safetensors_io import read_safetensors  # noqa: E402


def state_dict(path):
    return collections.OrderedDict(
        (name, torch.tensor(list(t.data), dtype=torch.float32).reshape(t.shape))
        for name, t in read_safetensors(path).items())


def views(tensors):
    """The same values through other strides and offsets, as torch.save keeps them."""
    result = collections.OrderedDict()
    for name, t in tensors.items():
        if t.dim() == 2:
            result[name] = t.t().contiguous().t()
            assert result[name].stride() == (1, t.shape[0])
        else:
            longer = torch.cat([torch.full((3,), 7.0), t.reshape(-1), torch.full((2,), 9.0)])
            result[name] = longer[3:3 + t.numel()].view(t.shape)
            assert result[name].storage_offset() == 3
    word = "bert.embeddings.word_embeddings.weight"
    result["cls.predictions.decoder.weight"] = result[word]  # tied: one storage, two names
    rows = result["bert.embeddings.position_embeddings.weight"].shape[0]
    result["bert.embeddings.position_ids"] = torch.arange(rows).unsqueeze(0)
    return result


def make(src, outdir):
    tensors = state_dict(src)
    variants = {
        "zip": (tensors, {}),
        "legacy": (tensors, {"_use_new_zipfile_serialization": False}),
        "views": (views(tensors), {}),
        "f16": ({k: v.half() for k, v in tensors.items()}, {}),
        "bf16": ({k: v.bfloat16() for k, v in tensors.items()}, {}),
        "p4": (tensors, {"pickle_protocol": 4}),
        "p4legacy": (tensors, {"pickle_protocol": 4, "_use_new_zipfile_serialization": False}),
        "nested": ({"model": tensors, "epoch": 3}, {}),
        "extras": (collections.OrderedDict(
            list(tensors.items()) + [("extra.complex", torch.zeros(2, dtype=torch.complex64)),
                                     ("extra.scalar", torch.tensor(1.5)),
                                     ("extra.empty", torch.zeros(0, 3))]), {}),
    }
    for name, (values, options) in variants.items():
        os.makedirs(os.path.join(outdir, name), exist_ok=True)
        torch.save(values, os.path.join(outdir, name, "pytorch_model.bin"), **options)


class Touch:
    def __init__(self, flag):
        self.flag = flag

    def __reduce__(self):
        return (os.system, ("touch " + self.flag,))


def evil(out, flag):
    torch.save({"bert.embeddings.word_embeddings.weight": Touch(flag)}, out)


def module(out):
    torch.save(torch.nn.Linear(2, 2), out)


def check(saved, src, rounding):
    dtype = {"none": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[rounding]
    expected = {k: v.to(dtype).float() for k, v in state_dict(src).items()}
    loaded = state_dict(saved)
    if set(loaded) != set(expected):
        sys.exit(f"tensors differ: {sorted(set(loaded) ^ set(expected))}")
    for name, tensor in loaded.items():
        if not torch.equal(tensor, expected[name]):
            sys.exit(f"{name}: differs from the source rounded to {rounding}")
    print(f"{len(loaded)} tensors as the source, rounded to {rounding}")


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    {"make": make, "evil": evil, "module": module, "check": check}[command](*args)
