"""Checks a checkpoint saved after training with some groups frozen against the one it
started from: every tensor whose name starts with one of PREFIXES (comma-separated) holds
the start's values bit for bit, every other tensor has moved. With --not-bf16, also checks
that each frozen tensor has values that bf16 cannot hold (so that keeping them bit for bit
proves the fp32 values were kept, not their bf16 copies). Prints the counts, or exits 1
naming the first tensor that breaks a rule."""
import argparse
import array
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from safetensors_io import read_safetensors  # noqa: E402


def bf16_exact(values: array.array) -> bool:
    """Whether every value is a bf16 value: the low 16 bits of its fp32 encoding are 0."""
    bits = array.array("I")
    bits.frombytes(values.tobytes())
    return all(b & 0xFFFF == 0 for b in bits)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("start")
    parser.add_argument("saved")
    parser.add_argument("prefixes")
    parser.add_argument("--not-bf16", action="store_true")
    args = parser.parse_args()
    start, saved = read_safetensors(args.start), read_safetensors(args.saved)
    prefixes = tuple(args.prefixes.split(","))
    frozen = moved = 0
    for name, tensor in sorted(saved.items()):
        before = start[name]
        same = tensor.shape == before.shape and tensor.data.tobytes() == before.data.tobytes()
        if name.startswith(prefixes):
            if not same:
                sys.exit(f"{name}: frozen, but its values changed")
            if args.not_bf16 and bf16_exact(before.data):
                sys.exit(f"{name}: every start value is a bf16 value: the check proves nothing")
            frozen += 1
        elif same:
            sys.exit(f"{name}: trainable, but its values did not change")
        else:
            moved += 1
    print(f"frozen unchanged: {frozen} tensors; trained: {moved} tensors")


if __name__ == "__main__":
    main()
