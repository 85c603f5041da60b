#!/usr/bin/env python3
"""The memory frontier: what each memory technique saves, and what fits at 4, 6, 8 and 12 GB.

BERT-base and BERT-large dims (bench/models/*.toml) with a span head (SQuAD), seq 384,
effective batch 32, planned for the CUDA target on a T4 (--arch sm_75: fp16; the target keeps
512 MiB of the budget for the process), every number read from plan.json:
  1. what each technique saves at micro-batch 32, nothing recomputed (--vram 80GB): the
     fixed bytes on the device (parameters, fp32 masters, gradients, AdamW moments), the
     activations, the arena and the offloaded optimizer's host memory, for fp32 moments,
     8-bit moments (--optimizer-state 8bit), the embeddings frozen, both, and the optimizer in host
     memory (--offload-optimizer on, ZeRO-Offload);
  2. what the fit driver plans at 4, 6, 8 and 12 GB with fp32 moments (the default), with
     --optimizer-state auto (8-bit moments an axis of the search) and with the optimizer's
     memory an axis too (--offload-optimizer auto, --host-ram 64GB): micro-batch x steps,
     moments (and where), peak, recompute share and estimated step time, and whether the
     peak stays within the budget, never rises as the budget falls, and the estimate never
     falls;
  3. where AdamW runs, at micro-batch 32, nothing recomputed, on an A100 (--arch sm_80:
     bf16; fp16's loss scaling rules out what follows on sm_75): in the backward
     (--fuse-optimizer on: no gradient region), alone and with 8-bit moments, and on the
     host with the gradients streamed down during the backward (--offload-optimizer on).
Needs a bertc built with nvcc (the CUDA target). Usage: python3 bench/memory_frontier.py
"""
import datetime
import re
import tempfile
from pathlib import Path

from common import BERTC, job_copy, plan_or_none, print_table, require_bertc

ARCH = "sm_75"
BF16_ARCH = "sm_80"
BUDGETS = ["12GB", "8GB", "6GB", "4GB"]
FIXED = ["parameters", "master_weights", "gradients", "optimizer_state"]


def job(tmp, model, freeze_embeddings=False):
    """A span-head copy of bench/models/MODEL.toml at seq 384, batch 32, precision auto."""
    def edit(text):
        text = re.sub(r'task = "\w+"\nlabels = \d+', 'task = "span"', text)
        if freeze_embeddings:
            text = text.replace("[train]\n", '[train]\nfreeze = ["embeddings"]\n')
        return text
    name = f"{model}{'-frozen' if freeze_embeddings else ''}"
    return job_copy(tmp, model, name, 384, 32, edit)


def plan(toml, vram, out, flags=(), arch=ARCH):
    """plan.json of planning `toml` at `vram` on `arch`, or None when nothing fits."""
    return plan_or_none([toml, "--target", "cuda", "--arch", arch, "--vram", vram, *flags], out)


def gb(value):
    return f"{value / 1e9:.2f}"


OFFLOAD = ["--offload-optimizer", "on", "--host-ram", "64GB"]


def savings(tmp):
    header = ["model", "technique", "fixed GB", "activations GB", "arena GB", "host GB",
              "est. step s"]
    rows = []
    for model in ["bert-base", "bert-large"]:
        for label, frozen, flags in [("fp32 moments", False, []),
                                     ("8-bit moments", False, ["--optimizer-state", "8bit"]),
                                     ("embeddings frozen", True, []),
                                     ("both", True, ["--optimizer-state", "8bit"]),
                                     ("optimizer in host memory", False, OFFLOAD)]:
            p = plan(job(tmp, model, frozen), "80GB", Path(tmp) / "out",
                     ["--micro-batch", "32", "--remat", "none", *flags])
            fixed = sum(p["categories"][key] for key in FIXED)
            rows.append([model, label, gb(fixed), gb(p["categories"]["activations"]),
                         gb(p["arena_bytes"]), gb(p["host"]["bytes"]),
                         f"{p['estimated_step_seconds']:.3f}"])
    print_table(header, rows)


def in_backward(tmp):
    header = ["model", f"on {BF16_ARCH}, bf16", "fixed GB", "gradients GB", "arena GB",
              "host GB", "est. step s"]
    rows = []
    for model in ["bert-base", "bert-large"]:
        for label, flags in [("AdamW after the backward", []),
                             ("AdamW in the backward", ["--fuse-optimizer", "on"]),
                             ("in the backward, 8-bit moments",
                              ["--fuse-optimizer", "on", "--optimizer-state", "8bit"]),
                             ("on the host, streamed", OFFLOAD)]:
            p = plan(job(tmp, model), "80GB", Path(tmp) / "out",
                     ["--micro-batch", "32", "--remat", "none", *flags], arch=BF16_ARCH)
            fixed = sum(p["categories"][key] for key in FIXED)
            rows.append([model, label, gb(fixed), gb(p["categories"]["gradients"]),
                         gb(p["arena_bytes"]), gb(p["host"]["bytes"]),
                         f"{p['estimated_step_seconds']:.3f}"])
    print_table(header, rows)


SEARCHES = [("fp32", []), ("auto", ["--optimizer-state", "auto"]),
            ("auto, offload auto", ["--optimizer-state", "auto", "--offload-optimizer", "auto",
                                    "--host-ram", "64GB"])]


def frontier(tmp):
    header = ["model", "budget", "moments flag", "fits", "micro x steps", "moments", "peak GB",
              "recompute / step flops", "est. step s"]
    rows, checks = [], []
    for model in ["bert-base", "bert-large"]:
        for state, flags in SEARCHES:
            points = []
            for vram in BUDGETS:
                p = plan(job(tmp, model), vram, Path(tmp) / "out", flags)
                if p is None:
                    rows.append([model, vram, state, "no"] + ["-"] * 5)
                    continue
                points.append((p["budget_bytes"], p["peak_bytes"], p["estimated_step_seconds"]))
                where = ", host" if p["optimizer_on_host"] else ""
                rows.append([model, vram, state, "yes",
                             f"{p['micro_batch']} x {p['accumulation_steps']}",
                             p["optimizer_state"] + where, gb(p["peak_bytes"]),
                             f"{p['recompute_flops'] / p['step_flops']:.3f}",
                             f"{p['estimated_step_seconds']:.3f}"])
            pairs = list(zip(points, points[1:]))
            checks.append(f"{model}, {state}: peak <= budget: "
                          f"{all(q[1] <= q[0] for q in points)}; peak never rises as the budget "
                          f"falls: {all(b[1] <= a[1] for a, b in pairs)}; est. step time never "
                          f"falls: {all(b[2] >= a[2] for a, b in pairs)}")
    print_table(header, rows)
    print()
    print("\n".join(checks))


def main():
    require_bertc()
    print(f"bench/memory_frontier.py  {datetime.date.today()}  bertc={BERTC}  "
          f"(--target cuda --arch {ARCH})")
    with tempfile.TemporaryDirectory() as tmp:
        savings(tmp)
        print()
        frontier(tmp)
        print()
        in_backward(tmp)


if __name__ == "__main__":
    main()
