"""Compares two safetensors checkpoints tensor by tensor (each a file, a sharded model's
model.safetensors.index.json, or a model folder holding either): exits 1 when they hold different
names or shapes, or when some value differs from its reference by more than --atol plus
--rtol times the reference's magnitude; else prints the tensor that differs most and by how
much. --rms also bounds each tensor's root-mean-square difference, which rounding noise
keeps small where a few values may stray further (16-bit training). --only compares the
tensors whose names start with a prefix, --except leaves out those whose names contain a
part."""
import argparse
import math
import sys

from safetensors_io import read_model


def largest_difference(ours, reference, atol, rtol):
    """(excess, difference, name) of the value farthest from its reference: its difference
    over the tolerance it is allowed (above 1 fails)."""
    if sorted(ours) != sorted(reference):
        sys.exit(f"the checkpoints hold different tensors: {sorted(set(ours) ^ set(reference))}")
    worst = (0.0, 0.0, "")
    for name, tensor in sorted(ours.items()):
        expected = reference[name]
        if tensor.shape != expected.shape:
            sys.exit(f"{name}: shape {tensor.shape}, reference {expected.shape}")
        for a, b in zip(tensor.data, expected.data):
            difference = abs(a - b)
            allowed = atol + rtol * abs(b)
            excess = difference / allowed if allowed > 0 else (0.0 if difference == 0 else math.inf)
            if not excess <= worst[0]:
                worst = (excess, difference, name)
    return worst


def largest_rms_difference(ours, reference):
    """(root-mean-square difference, name) of the tensor that differs most on average."""
    worst = (0.0, "")
    for name, tensor in sorted(ours.items()):
        squares = sum((a - b) ** 2 for a, b in zip(tensor.data, reference[name].data))
        rms = math.sqrt(squares / max(len(tensor.data), 1))
        if not rms <= worst[0]:
            worst = (rms, name)
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("ours")
    parser.add_argument("reference")
    parser.add_argument("--atol", type=float, required=True)
    parser.add_argument("--rtol", type=float, default=0.0)
    parser.add_argument("--rms", type=float, metavar="BOUND",
                        help="also fail when a tensor's root-mean-square difference exceeds BOUND")
    parser.add_argument("--only", default="", metavar="PREFIX",
                        help="compare only the tensors whose names start with PREFIX")
    parser.add_argument("--except", dest="excluded", default="", metavar="PART",
                        help="leave out the tensors whose names contain PART")
    args = parser.parse_args()
    ours, reference = read_model(args.ours), read_model(args.reference)
    if args.only:
        ours = {name: t for name, t in ours.items() if name.startswith(args.only)}
        reference = {name: t for name, t in reference.items() if name.startswith(args.only)}
        if not ours:
            sys.exit(f"no tensor starts with {args.only}")
    if args.excluded:
        ours = {name: t for name, t in ours.items() if args.excluded not in name}
        reference = {name: t for name, t in reference.items() if args.excluded not in name}
    excess, difference, name = largest_difference(ours, reference, args.atol, args.rtol)
    print(f"largest difference {difference:.3g} in {name}")
    if not excess <= 1:
        sys.exit(f"{name} differs by {difference:.3g}, beyond atol {args.atol:g} + rtol {args.rtol:g}")
    if args.rms is not None:
        rms, name = largest_rms_difference(ours, reference)
        print(f"largest root-mean-square difference {rms:.3g} in {name}")
        if not rms <= args.rms:
            sys.exit(f"{name} differs by {rms:.3g} root-mean-square, beyond {args.rms:g}")


if __name__ == "__main__":
    main()
