"""Checks that `bertc --max-batch` agrees with real compiles (max-batch-agrees.test).

For each --remat given and each row of the table (a seq_len and its micro-batch V), the job
is compiled with seq_len set, [train] batch set to the micro-batch (which must divide it)
and --micro-batch pinned, -emit=plan:
  1. V plans and fits (exit 0);
  2. V + 1 does not (exit 3, the budget cannot be met);
  3. no sampled larger value fits either (exit 3): V + 2, 2V, 4V and a few drawn at random
     (fixed seed) between V + 2 and 4V, up to 4096, the largest batch a job may have.
A row V of 0 ("none") needs 1 not to fit. Prints one line per row, then "ok".

usage: check_max_batch_agrees.py BERTC MODEL.toml WORKDIR --vram SIZE --remat none,auto
       [-- BERTC FLAGS...]
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

# bertc's exit codes (bertc.cpp).
FITS, OVER_BUDGET = 0, 3
# The largest [train] batch, and so micro-batch, a job may have (docs/dsl.md, "Limits"); the
# table says ">= 4096" there.
MAX_BATCH = 4096


def job_at(model_text, seq_len, batch):
    """The job with [train] seq_len and batch replaced."""
    text = re.sub(r"(?m)^seq_len = .*$", f"seq_len = {seq_len}", model_text)
    return re.sub(r"(?m)^batch = .*$", f"batch = {batch}", text)


def compile_status(args, model_text, seq_len, micro_batch, remat, workdir):
    """bertc's exit code for the job at (seq_len, micro_batch), -emit=plan."""
    path = os.path.join(workdir, f"job-{remat}-{seq_len}-{micro_batch}.toml")
    with open(path, "w") as out:
        out.write(job_at(model_text, seq_len, micro_batch))
    result = subprocess.run(
        [args.bertc, path, "--vram", args.vram, "--remat", remat, "--micro-batch",
         str(micro_batch), "-emit=plan", "-o", os.path.join(workdir, "plan")] + args.flags,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode not in (FITS, OVER_BUDGET):
        sys.exit(f"bertc exited {result.returncode} at seq_len {seq_len}, micro-batch "
                 f"{micro_batch}: {result.stderr.strip()}")
    return result.returncode


def max_batch_rows(args, remat, workdir):
    out = os.path.join(workdir, f"max-{remat}")
    subprocess.run([args.bertc, args.model, "--vram", args.vram, "--remat", remat,
                    "--max-batch", "-o", out] + args.flags, check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "max_batch.json")) as table:
        return json.load(table)["rows"]


def larger_samples(value, rng):
    """Micro-batches above value + 1 that must not fit (a job's batch is at most 4096)."""
    low, high = value + 2, min(max(4 * value, value + 2), MAX_BATCH)
    if low > high:
        return []
    samples = {low, 2 * value, high} | {rng.randint(low, high) for _ in range(3)}
    return sorted(s for s in samples if low <= s <= high)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bertc")
    parser.add_argument("model")
    parser.add_argument("workdir")
    parser.add_argument("--vram", required=True)
    parser.add_argument("--remat", required=True, help="comma-separated: none,auto")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.flags = argv[split + 1:]
    os.makedirs(args.workdir, exist_ok=True)
    with open(args.model) as model:
        model_text = model.read()
    rng = random.Random(1)
    failures = []
    for remat in args.remat.split(","):
        for row in max_batch_rows(args, remat, args.workdir):
            seq, value = row["seq_len"], row["max_micro_batch"]
            status = lambda n: compile_status(args, model_text, seq, n, remat, args.workdir)
            expected = [(value, FITS)] if value > 0 else []
            if value < MAX_BATCH:
                expected.append((value + 1, OVER_BUDGET))
                expected += [(n, OVER_BUDGET) for n in larger_samples(value, rng)]
            wrong = []
            for n, want in expected:
                got = status(n)
                if got != want:
                    wrong.append(f"micro-batch {n} exits {got}, not {want}")
            print(f"remat {remat}, seq_len {seq}: max micro-batch {value}: "
                  + ("; ".join(wrong) if wrong else "agrees"))
            failures += wrong
    if failures:
        sys.exit(f"{len(failures)} compile(s) disagree with --max-batch")
    print("ok")


if __name__ == "__main__":
    main()
