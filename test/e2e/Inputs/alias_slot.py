"""Breaks a memory plan on purpose: gives the first op named OP the arena offset of its
first operand's defining op, so it overwrites a tensor that is still live."""
import argparse
import re
import sys


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("op", help="e.g. bert.gelu")
    args = parser.parse_args(argv)
    lines = sys.stdin.read().split("\n")
    offsets = {}
    for i, line in enumerate(lines):
        defined = re.match(r"\s*(%\w+) = .*bert\.offsets = array<i64: (\d+)>", line)
        if defined:
            offsets[defined.group(1)] = defined.group(2)
        use = re.match(r"\s*%\w+ = " + re.escape(args.op) + r" (%\w+)", line)
        if use and use.group(1) in offsets:
            lines[i] = re.sub(r"bert\.offsets = array<i64: \d+>",
                              f"bert.offsets = array<i64: {offsets[use.group(1)]}>", line)
            break
    else:
        sys.exit(f"no {args.op} whose operand has a planned offset")
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
