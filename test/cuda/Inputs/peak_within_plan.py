"""Checks a CUDA trainer's measured device peak against its plan.

Reads the trainer's output line "device peak: N bytes (...) in use on GPU (cudaMemGetInfo, all
processes); arena ..." and plan.json's peak_bytes: the plan's figure for the whole process
(arena_bytes plus categories.reserve, the room kept for the CUDA context and libraries), which
is what cudaMemGetInfo's in-use bytes measure. Prints both; exits 1 when the trainer's output has
no such line or the measured peak is above the plan's.
Usage: peak_within_plan.py TRAINER_OUTPUT PLAN_JSON
"""
import json
import re
import sys


def gib(n):
    return f"{n} bytes ({n / 2**30:.2f} GiB)"


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    output, plan_file = argv
    with open(output, errors="replace") as f:
        match = re.search(r"device peak: (\d+)", f.read())
    if not match:
        print(f"no 'device peak:' line in {output}")
        return 1
    measured = int(match.group(1))
    with open(plan_file) as f:
        planned = json.load(f)["peak_bytes"]
    verdict = "<=" if measured <= planned else ">"
    print(f"device peak {gib(measured)} {verdict} plan peak_bytes {gib(planned)}")
    return 0 if measured <= planned else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
