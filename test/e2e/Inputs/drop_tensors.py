"""Writes a copy of a safetensors file without the tensors whose names start with PREFIX."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402


def main(source, prefix, destination):
    tensors = read_safetensors(source)
    kept = {name: tensor for name, tensor in tensors.items() if not name.startswith(prefix)}
    if len(kept) == len(tensors):
        sys.exit(f"{source}: no tensor starts with {prefix}")
    write_safetensors(destination, kept)


if __name__ == "__main__":
    main(*sys.argv[1:])
