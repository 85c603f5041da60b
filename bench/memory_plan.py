#!/usr/bin/env python3
"""How close the arena comes to the max-live lower bound, and how long planning takes.

For BERT-base and BERT-large (fp32, batch 32) at seq_len 128 and 512:
  arena / lower bound: plan.json's arena_bytes over lower_bound_bytes (the most bytes live
                       at once over the schedule: no packing can do better); target <= 1.03.
  plan s:              `bertc MODEL --target cpu -emit=mlir-planned`, frontend to verified plan, best of 3.
Usage: python3 bench/memory_plan.py
"""
import datetime
import re
import subprocess
import tempfile
import time
from pathlib import Path

from common import BERTC, MODELS_DIR, VRAM, print_table, require_bertc

MODELS = ["bert-base", "bert-large"]
SEQ_LENS = [128, 512]
RUNS = 3


def planned(toml):
    """(arena_bytes, lower_bound_bytes, best wall seconds) of planning `toml`."""
    best = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        out = subprocess.run([str(BERTC), str(toml), "--target", "cpu", "-emit=mlir-planned",
                              "--vram", VRAM],
                             capture_output=True, text=True, check=True).stdout
        best = min(best, time.perf_counter() - start)
    plan = re.search(r"bert\.plan = #bert\.plan<[^>]*>", out).group(0)
    number = lambda key: int(re.search(key + r" = (\d+)", plan).group(1))
    return number("arena_bytes"), number("lower_bound_bytes"), best


def main():
    require_bertc()
    print(f"bench/memory_plan.py  {datetime.date.today()}  bertc={BERTC}  (batch 32, fp32)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in MODELS:
            for seq in SEQ_LENS:
                text = (MODELS_DIR / f"{model}.toml").read_text()
                toml = Path(tmp) / f"{model}-{seq}.toml"
                toml.write_text(re.sub(r"seq_len = \d+", f"seq_len = {seq}", text))
                arena, bound, seconds = planned(toml)
                rows.append([model, seq, f"{arena / 1e9:.3f}", f"{bound / 1e9:.3f}",
                             f"{arena / bound:.4f}", f"{seconds:.2f}"])
    print_table(["model", "seq_len", "arena GB", "lower bound GB", "arena / lower bound",
                 "plan s"], rows)


if __name__ == "__main__":
    main()
