#!/usr/bin/env python3
"""Where a step's time goes, measured beside the estimate: each op's seconds a step.

Builds bench/models/MODEL.toml with `bertc --time-ops` (seq_len and batch as given, the
plan otherwise bertc's), trains it --steps steps on generated full-length rows, and prints,
per op name, the runs a step and the seconds a step the trainer measured (its first step
left out) beside plan.json's `step_time` (the roofline estimate for the same target: the
CPU's model, or --arch's GPU). The measured optimizer step holds the estimate's AdamW rows.
On the CUDA target the micro-steps run without CUDA graphs, each op between two events.
--prepare DIR builds the trainer into DIR with a manifest.json (model, seq, batch, target,
arch) and runs nothing (no GPU needed); --prebuilt DIR runs that trainer without calling
bertc, for a GPU machine that cannot build bertc (scripts/gpu-bundle.sh, scripts/gpu-check.sh).
Usage: python3 bench/op_times.py [--model mini] [--target cpu|cuda|cuda-sim] [--arch SM]
                                 [--seq 128] [--batch 8] [--steps 11] [--threads N]
                                 [--prepare DIR | --prebuilt DIR]
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from common import BERTC, REPO_ROOT, VRAM, job_copy, print_table, read_plan, require_bertc, \
    run_checked

ROW = re.compile(r"^ +([0-9.]+) +[0-9.]+% +(\d+)  (\S.*)$", re.M)
MANIFEST = "manifest.json"  # what --prepare writes into its directory and --prebuilt reads


def build(out, model, seq, batch, target, arch):
    """Builds bench/models/MODEL.toml at `seq` and `batch` with --time-ops into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    job = job_copy(out, model, "job", seq, batch)
    arch_flag = ["--arch", arch] if arch else []
    run_checked([BERTC, job, "--target", target, *arch_flag, "--vram", VRAM, "--time-ops",
                 "-o", out])
    return tomllib.loads(job.read_text())["model"]["vocab"]


def prepare(out, args):
    """Builds the trainer into `out` and writes the manifest --prebuilt reads."""
    vocab = build(out, args.model, args.seq, args.batch, args.target, args.arch)
    manifest = {"model": args.model, "seq": args.seq, "batch": args.batch, "vocab": vocab,
                "target": args.target, "arch": args.arch}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"bench: built {args.model} seq {args.seq} batch {args.batch} with --time-ops for "
          f"{args.target}{' ' + args.arch if args.arch else ''} into {out}")


def load_prebuilt(directory, args):
    """The manifest `prepare` wrote into `directory`; its job replaces the arguments'."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError) as error:
        sys.exit(f"bench: no prebuilt trainer in {directory}: {error}")
    for key in ("model", "seq", "batch", "target", "arch"):
        setattr(args, key, manifest[key])
    return manifest["vocab"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mini", help="bench/models/MODEL.toml (default mini)")
    parser.add_argument("--target", default="cpu", choices=["cpu", "cuda", "cuda-sim"])
    parser.add_argument("--arch", help="the GPU's sm_XX for the estimate (cuda targets)")
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=11, help="the first is left out")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (default 1)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--prepare", metavar="DIR", type=Path,
                       help="build the trainer into DIR with a manifest; run nothing")
    where.add_argument("--prebuilt", metavar="DIR", type=Path,
                       help="run the trainer --prepare built into DIR; bertc is not called "
                            "(the manifest's model, seq, batch, target and arch)")
    args = parser.parse_args()
    if args.steps < 2:
        sys.exit("bench: --steps must be at least 2 (the first is left out)")
    if not args.prebuilt:
        require_bertc()
    if args.prepare:
        prepare(args.prepare, args)
        return
    vocab = load_prebuilt(args.prebuilt, args) if args.prebuilt else None
    print(f"bench/op_times.py  {datetime.date.today()}  "
          f"{'prebuilt ' + str(args.prebuilt) if args.prebuilt else 'bertc=' + str(BERTC)}  "
          f"{args.model} seq {args.seq} batch {args.batch}, {args.target}"
          f"{' ' + args.arch if args.arch else ''}, {args.threads} thread(s), "
          f"{args.steps - 1} steps measured")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out = args.prebuilt or tmp / "out"
        if not args.prebuilt:
            vocab = build(out, args.model, args.seq, args.batch, args.target, args.arch)
        data = tmp / "train.jsonl"
        run_checked([sys.executable, REPO_ROOT / "examples" / "tiny" / "make_data.py", "--rows",
                     args.batch * args.steps, "--vocab", vocab, "--min-len", args.seq,
                     "--max-len", args.seq, "--seed", 0, "--out", data])
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
                   OPENBLAS_NUM_THREADS=str(args.threads))
        result = subprocess.run([out / "trainer", "--data", data, "--steps", str(args.steps)],
                                env=env, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"bench: the trainer failed:\n{result.stdout}{result.stderr}")
        plan = read_plan(out)
    measured = {op: (float(seconds), int(runs)) for seconds, runs, op in ROW.findall(result.stdout)}
    if not measured:
        sys.exit(f"bench: the trainer printed no op times:\n{result.stdout}")
    estimated = {entry["op"]: entry["seconds"] for entry in plan["step_time"]}
    # The estimate prices the optimizer step op by op; the trainer times it whole.
    optimizer_ops = [op for op in estimated if op not in measured]
    if "optimizer step" in measured:
        estimated["optimizer step"] = sum(estimated.pop(op) for op in optimizer_ops)
    rows = []
    for op, (seconds, runs) in measured.items():
        estimate = estimated.get(op)
        rows.append([op, runs, f"{seconds:.6f}", "-" if estimate is None else f"{estimate:.6f}",
                     "-" if not estimate else f"{seconds / estimate:.2f}"])
    total = sum(seconds for seconds, _ in measured.values())
    rows.append(["**step**", "", f"{total:.6f}", f"{plan['estimated_step_seconds']:.6f}",
                 f"{total / plan['estimated_step_seconds']:.2f}"])
    print(f"estimated for {plan['estimated_for']}")
    print_table(["op (all its runs in a step)", "runs", "measured s", "estimated s",
                 "measured / estimated"], rows)


if __name__ == "__main__":
    main()
