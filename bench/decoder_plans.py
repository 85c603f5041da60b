#!/usr/bin/env python3
"""Full fine-tuning plans for real decoder LLMs under consumer VRAM budgets, read from plan.json.

Each model is bench/models/NAME.toml: causal-LM fine-tuning planned from its Hugging Face
config.json alone (bench/models/hf/NAME/), batch 8 at seq_len 2048 (GPT-2: 1024, its
n_positions), precision auto. Nothing runs on a GPU: `--target cuda` plans a CUDA trainer
(bertc must have been built with nvcc) and estimates its step on --arch.
  1. The grid: for each model x budget x arch,
       bertc MODEL --target cuda --arch ARCH --vram V --host-ram H -emit=plan
             --optimizer-state auto --fuse-optimizer auto --offload-optimizer auto
     where the fit driver chooses the split (micro-batch x accumulation), the precision
     (the arch's 16-bit one or fp32; sm_75 has no bf16, so fp16 with loss scaling), the
     recomputation, the AdamW state (fp32 or 8-bit), where AdamW runs (after the backward on
     the device, in the backward, or in host memory) and the LM head's token chunk. One
     matrix per arch (the chosen split and its estimated step), then one row per plan.
     Where nothing fits, the over-budget advice bertc prints (its "ways to fit") is shown
     for the largest budget that failed.
  2. The issue's targets: Qwen2.5-0.5B at seq 8192 in 6 GB and Llama-3.2-1B at seq 2048 in
     12 GB, on sm_86.
  3. Limits: for each model at --limits BUDGET:ARCH (default 24GB:sm_86 and 12GB:sm_86),
     `bertc --max-seq` (the longest seq_len at micro-batch 1) and `bertc --max-batch` (the
     largest micro-batch per seq_len, from 1024 doubling to the model's max_position), with
     the optimizer in host memory (--offload-optimizer on: the least on the device). --check
     compiles each answer V at micro-batch V (must fit) and V + 1 (must not; only the
     shortest seq_len where nothing fits): a compile that runs out of budget prints bertc's
     advice, which takes it up to a few minutes on the larger models.
--host-ram (default 64GB) is what an offloaded optimizer may take, fixed so that the plans do
not depend on this machine's free memory. The whole grid took 27 minutes at --jobs 2 on a
2-core machine (a plan 0.5 s to 75 s, bench/README.md): --models, --budgets and
--archs take subsets, --jobs N runs N bertc at once, and each bertc run is logged on stderr
as it ends.
Usage: python3 bench/decoder_plans.py [--models gpt2,llama-3.2-1b] [--budgets 6GB,24GB]
       [--archs sm_86] [--jobs 2] [--no-grid] [--no-targets] [--no-limits]
       [--limits 24GB:sm_86] [--host-ram 64GB] [--check]
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import BERTC, MODELS_DIR, job_copy, print_table, require_bertc

MODELS = ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "qwen2.5-0.5b", "llama-3.2-1b",
          "qwen2.5-1.5b", "llama-3.2-3b", "qwen2.5-7b", "llama-3.1-8b"]
BUDGETS = ["6GB", "8GB", "12GB", "16GB", "24GB"]
ARCHS = ["sm_75", "sm_86", "sm_89"]
FIT_FLAGS = ["--optimizer-state", "auto", "--fuse-optimizer", "auto", "--offload-optimizer", "auto"]
# The two targets: (model, seq_len, budget, arch).
TARGETS = [("qwen2.5-0.5b", 8192, "6GB", "sm_86"), ("llama-3.2-1b", 2048, "12GB", "sm_86")]
# --max-batch and --max-seq with the optimizer in host memory: the least on the device.
LIMIT_FLAGS = ["--offload-optimizer", "on"]
# The detail tables' last column: where nothing fits, the over-budget advice's option that
# comes closest alone, with its arena.
NOT_FITTING = "nothing fits: closest alone"
# bertc's exit codes (compiler/tools/bertc/ExitCodes.h).
FITS, OVER_BUDGET = 0, 3


class Plan:
    """One `bertc -emit=plan` run: its exit code, plan.json when it fitted, the over-budget
    report's figures when not, and its wall time."""

    def __init__(self, result, out, seconds):
        self.rc = result.returncode
        self.seconds = seconds
        self.stderr = result.stderr
        self.json = json.loads((out / "plan.json").read_text()) if self.rc == FITS else None
        needs = re.search(r"the plan needs ([\d.]+ \w+) but --vram", result.stderr)
        host = re.search(r"the optimizer in host memory takes ([\d.]+ \w+)", result.stderr)
        self.needs = needs.group(1) if needs else None
        self.host_needs = host.group(1) if host else None
        advice = result.stderr.split("ways to fit", 1)
        self.advice = "ways to fit" + advice[1].rstrip() if len(advice) == 2 else ""
        # The advice's flags with the arena each gives alone: "  - --flag X (what): 1.2 GB".
        alone = re.findall(r"(?m)^  - (--[\w-]+ \w+) \(.*\): ([\d.]+) GB", result.stderr)
        self.best_alone = min(alone, key=lambda a: float(a[1])) if alone else None

    @property
    def fits(self):
        return self.rc == FITS


def run_bertc(args, out):
    """(CompletedProcess, wall seconds) of `bertc ARGS -o OUT`."""
    start = time.perf_counter()
    result = subprocess.run([str(BERTC), *map(str, args), "-o", str(out)], capture_output=True,
                            text=True)
    return result, time.perf_counter() - start


def plan(toml, budget, arch, host_ram, out, flags=FIT_FLAGS):
    """`bertc TOML --target cuda -emit=plan` at `budget` on `arch`, as a Plan."""
    result, seconds = run_bertc([toml, "--target", "cuda", "--arch", arch, "--vram", budget,
                                 "--host-ram", host_ram, "-emit=plan", *flags], out)
    print(f"  {Path(toml).stem} {budget} {arch}: exit {result.returncode}, {seconds:.0f} s",
          file=sys.stderr, flush=True)
    return Plan(result, Path(out), seconds)


def optimizer_label(p, short=False):
    """Where AdamW runs (device, in backward, host; short: dev, bwd, host) and, with 8-bit
    moments, '8-bit' (short: '8')."""
    where = ("host" if p["optimizer_on_host"] else
             ("bwd" if short else "in backward") if p["optimizer_in_backward"] else
             ("dev" if short else "device"))
    eight_bit = p["optimizer_state"] == "8bit"
    return where + (("8" if short else " 8-bit") if eight_bit else "")


def gb(n):
    return f"{n / 1e9:.2f}"


def detail_cells(pl):
    """The detail row's cells after model and budget."""
    if not pl.fits:
        why = (f"host RAM {pl.host_needs}" if pl.host_needs else
               f"{pl.best_alone[0]}: {pl.best_alone[1]} GB" if pl.best_alone else
               f"needs {pl.needs}" if pl.needs else f"bertc exit {pl.rc}")
        return ["no"] + ["-"] * 7 + [f"{pl.seconds:.0f}", why]
    p = pl.json
    share = p["recompute_flops"] / p["step_flops"]
    recompute = "-" if not share else "<1%" if share < 0.005 else f"{100 * share:.0f}%"
    return ["yes", f"{p['micro_batch']} x {p['accumulation_steps']}", p["precision"],
            recompute, optimizer_label(p),
            str(p["lm_head_token_chunk"]), gb(p["arena_bytes"]),
            f"{p['estimated_step_seconds']:.2f}", f"{pl.seconds:.0f}", ""]


def matrix_cell(pl):
    """'8x1 bf16 rc dev8 1.23s': the split, precision, recompute, AdamW, estimated step."""
    if not pl.fits:
        return "-"
    p = pl.json
    tags = [p["precision"]] + (["rc"] if p["recompute_flops"] else []) + [optimizer_label(p, True)]
    return (f"{p['micro_batch']}x{p['accumulation_steps']} {' '.join(tags)} "
            f"{p['estimated_step_seconds']:.2f}s")


def print_grid(models, budgets, archs, plans):
    for arch in archs:
        print(f"\n{arch}: micro-batch x accumulation, precision, rc = recompute, AdamW on "
              f"dev(ice) / bwd (in the backward) / host (8: 8-bit moments), est. step s")
        print_table(["model"] + budgets,
                    [[m] + [matrix_cell(plans[m, b, arch]) for b in budgets] for m in models])
    for arch in archs:
        print(f"\n{arch}, each plan:")
        print_table(["model", "budget", "fits", "micro x acc", "precision", "recompute",
                     "AdamW", "LM head chunk", "arena GB", "est. step s", "plan s", NOT_FITTING],
                    [[m, b, *detail_cells(plans[m, b, arch])] for m in models for b in budgets])
    # What bertc advises where nothing fits: at the largest budget that failed.
    for m in models:
        for arch in archs:
            failed = [b for b in budgets if not plans[m, b, arch].fits]
            if failed and plans[m, failed[-1], arch].advice:
                print(f"\n{m}, {failed[-1]}, {arch}: nothing fits; bertc's report ends:")
                print("    " + "\n    ".join(plans[m, failed[-1], arch].advice.splitlines()))


def max_batch(toml, budget, arch, flags, out):
    """(rows of max_batch.json, seconds), or (None, stderr) on failure."""
    result, seconds = run_bertc([toml, "--target", "cuda", "--arch", arch, "--vram", budget,
                                 "--max-batch", *flags], out)
    if result.returncode != 0:
        return None, result.stderr.strip()
    return json.loads((Path(out) / "max_batch.json").read_text())["rows"], seconds


def max_seq(toml, budget, arch, flags, out):
    """(longest seq_len at micro-batch 1, seconds), or (None, stderr) on failure."""
    result, seconds = run_bertc([toml, "--target", "cuda", "--arch", arch, "--vram", budget,
                                 "--max-seq", *flags], out)
    found = re.search(r"micro-batch 1 under .*: (\d+|none)", result.stdout)
    if result.returncode != 0 or not found:
        return None, (result.stderr or result.stdout).strip()
    return (0 if found.group(1) == "none" else int(found.group(1))), seconds


def agrees(tmp, model, seq, value, budget, arch, host_ram):
    """None when a compile fits at micro-batch `value` (batch `value`) and not at
    `value` + 1, else what disagreed."""
    def status(rows):
        toml = job_copy(tmp, model, f"check-{model}-{seq}-{rows}", seq, rows)
        return plan(toml, budget, arch, host_ram, Path(tmp) / "check",
                    ["--micro-batch", str(rows), *LIMIT_FLAGS]).rc
    below = status(value) if value else FITS
    above = status(value + 1)
    if below == FITS and above == OVER_BUDGET:
        return None
    return f"seq {seq}: exit {below} at micro-batch {value}, {above} at {value + 1}"


def print_limits(tmp, models, limits, host_ram, check):
    """Per BUDGET:ARCH, a row per model: --max-seq, then --max-batch from seq 1024 on."""
    for budget, arch in limits:
        results = {}
        for m in models:
            toml = MODELS_DIR / f"{m}.toml"
            rows, seconds = max_batch(toml, budget, arch, LIMIT_FLAGS, Path(tmp) / "mb")
            longest, seq_seconds = max_seq(toml, budget, arch, LIMIT_FLAGS, Path(tmp) / "ms")
            if rows is None or longest is None:
                print(f"\nbertc --max-batch/--max-seq failed for {m}:\n{seconds}\n{seq_seconds}")
                continue
            # A decoder's rows: 1024 doubling to its max_position.
            rows = [r for r in rows if r["seq_len"] >= min(1024, rows[-1]["seq_len"])]
            # Where nothing fits at a seq_len, nothing fits at a longer one: one check.
            checked = [r for r in rows if r["max_micro_batch"]] + [
                r for r in rows if not r["max_micro_batch"]][:1]
            disagreements = [a for r in checked if check for a in [
                agrees(tmp, m, r["seq_len"], r["max_micro_batch"], budget, arch, host_ram)] if a]
            results[m] = (longest, {r["seq_len"]: r["max_micro_batch"] for r in rows},
                          seconds + seq_seconds, disagreements)
        seqs = sorted({s for _, by_seq, _, _ in results.values() for s in by_seq})
        print(f"\n{budget}, {arch}, {' '.join(LIMIT_FLAGS)}: the longest seq_len at micro-batch 1 "
              f"(--max-seq), then the largest micro-batch per seq_len (--max-batch; . past the "
              f"model's max_position)")
        header = ["model", "max seq"] + [f"{s // 1024}k" for s in seqs] + ["bertc s"]
        if check:
            header.append("compiles agree")
        table = []
        for m, (longest, by_seq, seconds, disagreements) in results.items():
            cells = [m, longest or "none"] + [
                "." if s not in by_seq else by_seq[s] or "none" for s in seqs] + [f"{seconds:.0f}"]
            if check:
                cells.append("; ".join(disagreements) or "yes")
            table.append(cells)
        print_table(header, table)


def targets(tmp, host_ram):
    print("\nThe issue's targets (batch 8, precision auto, the fit driver free):")
    rows = []
    for model, seq, budget, arch in TARGETS:
        toml = job_copy(tmp, model, f"target-{model}-{seq}", seq, 8)
        pl = plan(toml, budget, arch, host_ram, Path(tmp) / "t")
        rows.append([f"{model}, seq {seq}", budget, arch, *detail_cells(pl)])
    print_table(["job", "budget", "arch", "fits", "micro x acc", "precision", "recompute",
                 "AdamW", "LM head chunk", "arena GB", "est. step s", "plan s", NOT_FITTING], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--budgets", default=",".join(BUDGETS))
    parser.add_argument("--archs", default=",".join(ARCHS))
    parser.add_argument("--limits", default="24GB:sm_86,12GB:sm_86",
                        help="BUDGET:ARCH pairs for --max-batch and --max-seq")
    parser.add_argument("--host-ram", default="64GB")
    parser.add_argument("--jobs", type=int, default=1, help="bertc runs at once")
    parser.add_argument("--no-grid", action="store_true")
    parser.add_argument("--no-targets", action="store_true")
    parser.add_argument("--no-limits", action="store_true")
    parser.add_argument("--check", action="store_true",
                        help="compile either side of each --max-batch answer")
    args = parser.parse_args()
    models, budgets, archs = (s.split(",") for s in (args.models, args.budgets, args.archs))
    limits = [] if args.no_limits else [tuple(pair.split(":")) for pair in args.limits.split(",")]
    require_bertc()
    start = time.perf_counter()
    print(f"bench/decoder_plans.py  {datetime.date.today()}  {platform.node()}, "
          f"{os.cpu_count()} cores  bertc={BERTC}  --host-ram {args.host_ram}")
    with tempfile.TemporaryDirectory() as tmp:
        plans = {}
        if not args.no_grid:
            keys = [(m, b, a) for m in models for b in budgets for a in archs]
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                futures = {key: pool.submit(plan, MODELS_DIR / f"{key[0]}.toml", key[1], key[2],
                                            args.host_ram, Path(tmp) / "-".join(key))
                           for key in keys}
                plans = {key: future.result() for key, future in futures.items()}
            print_grid(models, budgets, archs, plans)
            errors = [(k, p) for k, p in plans.items() if p.rc not in (FITS, OVER_BUDGET)]
            for key, p in errors:
                print(f"\nbertc failed (exit {p.rc}) for {key}:\n{p.stderr}")
        if not args.no_targets:
            targets(tmp, args.host_ram)
        print_limits(tmp, models, limits, args.host_ram, args.check)
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
