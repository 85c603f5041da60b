"""Summarise the evaluations of a metrics log for FileCheck, and check score bounds.

Prints "evals N" and then each value of the last evaluation line as "NAME VALUE" (4
decimals). Each --min NAME=X (or --max NAME=X) fails the run, naming the value, when the
last evaluation's NAME is below (above) X.
"""
import argparse
import json
import sys


def bound(text):
    name, _, value = text.partition("=")
    return name, float(value)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", help="JSONL metrics log")
    parser.add_argument("--min", type=bound, action="append", default=[], metavar="NAME=X")
    parser.add_argument("--max", type=bound, action="append", default=[], metavar="NAME=X")
    args = parser.parse_args(argv)
    with open(args.log) as f:
        evals = [r for r in (json.loads(line) for line in f if line.strip()) if "eval_loss" in r]
    if not evals:
        sys.exit(f"{args.log}: no evaluation logged")
    last = evals[-1]
    print(f"evals {len(evals)}")
    for name, value in last.items():
        print(f"{name} {value:.4f}" if isinstance(value, float) else f"{name} {value}")
    for name, low in args.min:
        if last[name] < low:
            sys.exit(f"{name} {last[name]} is below {low}")
    for name, high in args.max:
        if last[name] > high:
            sys.exit(f"{name} {last[name]} is above {high}")


if __name__ == "__main__":
    main(sys.argv[1:])
