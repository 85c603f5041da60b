#!/usr/bin/env python3
"""What the fit driver chooses under a VRAM budget, read from plan.json.

bert-base-cased dims (bench/models/bert-base.toml), precision "auto" planned for --arch
sm_80 (bf16), `bertc MODEL --target cpu --vram V --arch sm_80 -emit=plan`. --target cpu keeps
the tables in bench/README.md valid now that bertc defaults to the cuda target where it has
nvcc: the cuda target keeps 512 MiB of the budget for the process and plans a larger GEMM
workspace, so its plans differ; --arch still sets the precision and the speeds estimated at.
  1. seq 512, effective batch 32, at 6GB: the chosen plan and recompute_flops / step_flops
     (target <= 0.10);
  2. seq 128, effective batch 256, at 6GB: the chosen plan (target: it fits);
  3. seq 512, batch 32, budgets from 24GB down to the smallest that fits: peak <= budget,
     the peak never rising as the budget falls and the estimated step time never falling;
     then the same with the micro-batch pinned to 32 (--micro-batch 32), where only
     recomputation can save memory: recompute_flops never falling as the budget does;
  4. BERT-large (24 layers), seq 512, batch 32, at 8GB: wall time of the whole fit search
     (every candidate planned, the rematerialization solver included; target < 10 s).
Usage: python3 bench/fit_plan.py
"""
import datetime
import tempfile
import time
from pathlib import Path

from common import BERTC, job_copy, plan_or_none, print_table, require_bertc

ARCH = "sm_80"


def job(tmp, model, seq, batch):
    """A copy of bench/models/MODEL.toml at seq_len `seq`, batch `batch`, precision auto."""
    return job_copy(tmp, model, f"{model}-{seq}-{batch}", seq, batch)


def fit(toml, vram, out, flags=()):
    """(plan.json or None when nothing fits, wall seconds) of planning `toml` at `vram`."""
    start = time.perf_counter()
    plan = plan_or_none([toml, "--target", "cpu", "--vram", vram, "--arch", ARCH, *flags], out)
    return plan, time.perf_counter() - start


def describe(plan):
    recompute = plan["recompute_flops"] / plan["step_flops"]
    return [f"{plan['micro_batch']} x {plan['accumulation_steps']}", plan["precision"],
            f"{plan['peak_bytes'] / 1e9:.2f}", f"{recompute:.3f}",
            f"{plan['estimated_step_seconds']:.3f}"]


def main():
    require_bertc()
    print(f"bench/fit_plan.py  {datetime.date.today()}  bertc={BERTC}  (--arch {ARCH})")
    header = ["case", "budget", "fits", "micro x steps", "precision", "peak GB",
              "recompute / step flops", "est. step s", "search s"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        def case(label, toml, vram, flags=()):
            plan, seconds = fit(toml, vram, Path(tmp) / "out", flags)
            cells = describe(plan) if plan else ["-"] * 5
            rows.append([label, vram, "yes" if plan else "no", *cells, f"{seconds:.2f}"])
            return plan

        base512 = job(tmp, "bert-base", 512, 32)
        case("base seq 512 batch 32", base512, "6GB")
        case("base seq 128 batch 256", job(tmp, "bert-base", 128, 256), "6GB")
        case("large seq 512 batch 32", job(tmp, "bert-large", 512, 32), "8GB")
        print_table(header, rows)
        print()

        def sweep(label, flags=()):
            rows.clear()
            points = []
            for gb in [24, 16, 12, 10, 8, 6, 5, 4, 3.5, 3, 2.5, 2]:
                plan = case(label, base512, f"{gb}GB", flags)
                if plan is None:
                    break
                points.append((gb * 1e9, plan["peak_bytes"], plan["estimated_step_seconds"],
                               plan["recompute_flops"]))
            print_table(header, rows)
            pairs = list(zip(points, points[1:]))
            print(f"\npeak <= budget: {all(p[1] <= p[0] for p in points)}; "
                  f"peak never rises as the budget falls: {all(b[1] <= a[1] for a, b in pairs)}; "
                  f"est. step time never falls: {all(b[2] >= a[2] for a, b in pairs)}; "
                  f"recompute_flops never falls: {all(b[3] >= a[3] for a, b in pairs)}\n")

        sweep("base seq 512 batch 32")
        sweep("base seq 512, micro 32", ["--micro-batch", "32"])

if __name__ == "__main__":
    main()
