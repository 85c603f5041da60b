"""Checks that LOADED holds SEED's tensors whose names start with PREFIX and CHECKPOINT's
others, value for value; prints the counts, or exits 1 naming the first tensor that differs."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from safetensors_io import read_safetensors  # noqa: E402


def main(loaded_path, seed_path, checkpoint_path, prefix):
    loaded = read_safetensors(loaded_path)
    seed, checkpoint = read_safetensors(seed_path), read_safetensors(checkpoint_path)
    from_seed = 0
    for name, tensor in sorted(loaded.items()):
        expected = seed[name] if name.startswith(prefix) else checkpoint[name]
        if tensor.shape != expected.shape or list(tensor.data) != list(expected.data):
            source = "the seed" if name.startswith(prefix) else "the checkpoint"
            sys.exit(f"{name}: differs from {source}'s")
        from_seed += name.startswith(prefix)
    print(f"pooler from the seed: {from_seed} tensors; the rest from the checkpoint: "
          f"{len(loaded) - from_seed} tensors")


if __name__ == "__main__":
    main(*sys.argv[1:])
