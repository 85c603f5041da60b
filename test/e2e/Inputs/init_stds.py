"""Check the spread of a saved model's freshly initialised tensors.

Usage: init_stds.py FOLDER NAME=STD [NAME=STD ...]
For each tensor NAME of FOLDER's model.safetensors, the standard deviation of its values
(mean 0 assumed, as every normal init has) must be STD within 5 standard errors: a sample
of n draws of normal(0, STD) has a standard deviation within STD * 5 / sqrt(2 n) of STD
but for odds below one in a million. Prints one line per tensor; exits 1 on any miss.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from safetensors_io import read_model  # noqa: E402


def main():
    folder, expectations = sys.argv[1], sys.argv[2:]
    tensors = read_model(folder)
    failed = False
    for expectation in expectations:
        name, expected = expectation.split("=")
        values = tensors[name].data
        n = len(values)
        std = math.sqrt(sum(v * v for v in values) / n)
        tolerance = float(expected) * 5 / math.sqrt(2 * n)
        ok = abs(std - float(expected)) <= tolerance
        failed |= not ok
        print(f"{name} std {std:.5f} expected {float(expected):.5f} +- {tolerance:.5f}"
              f" {'ok' if ok else 'MISMATCH'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
