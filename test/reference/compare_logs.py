"""Compare two metrics logs (JSONL with "step" and "loss") step by step.

Prints step, ours, reference and relative difference; exits 1 at the first step where
|ours - reference| > atol + rtol * |reference|, or when the logs differ in steps, else 0.
--field compares another per-step value (e.g. grad_norm) instead of the loss; lines
without the field (e.g. evaluation records) are skipped.
"""
import argparse
import json
import sys


def read_values(path, field):
    """[(step, value of `field`)] in file order."""
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return [(record["step"], float(record[field])) for record in records if field in record]


def compare(ours, reference, rtol, atol):
    """Print the table; return True when every step matches within tolerance."""
    print(f"{'step':>6}  {'ours':>14}  {'reference':>14}  {'rel. diff':>10}")
    for (step, ours_loss), (ref_step, ref_loss) in zip(ours, reference):
        if step != ref_step:
            print(f"step mismatch: ours has step {step} where the reference has {ref_step}")
            return False
        difference = abs(ours_loss - ref_loss)
        relative = difference / abs(ref_loss) if ref_loss else float("inf") if difference else 0.0
        print(f"{step:>6}  {ours_loss:>14.8g}  {ref_loss:>14.8g}  {relative:>10.3g}")
        if not difference <= atol + rtol * abs(ref_loss):
            print(f"mismatch at step {step}: |diff| {difference:.3g} > {atol:g} + {rtol:g} * |reference|")
            return False
    if len(ours) != len(reference):
        print(f"step count differs: ours {len(ours)}, reference {len(reference)}")
        return False
    return True


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ours", help="log of the run under test")
    parser.add_argument("reference", help="log of the reference run")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=0.0)
    parser.add_argument("--field", default="loss", help="the per-step value to compare")
    args = parser.parse_args(argv)
    ours, reference = read_values(args.ours, args.field), read_values(args.reference, args.field)
    if not ours:
        sys.exit(f"{args.ours}: no step has a '{args.field}'")
    ok = compare(ours, reference, args.rtol, args.atol)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
