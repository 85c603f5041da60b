#!/usr/bin/env python3
"""How long bertc takes for BERT-base and BERT-large (fp32, batch 32 x seq 128).

  compile s: `bertc MODEL --target cpu --emit=cpp`, the whole pipeline up to the trainer's C++ source:
             the compiler's own time.
  build s:   `bertc MODEL --target cpu -o DIR`, the same plus compiling and linking the trainer with g++.
Each is the best of 3 runs (wall clock). Usage: python3 bench/compile_time.py
"""
import datetime
import os
import tempfile
import time
from pathlib import Path

from common import BERTC, MODELS_DIR, VRAM, print_table, read_plan, require_bertc, run_checked

MODELS = ["bert-base", "bert-large"]
RUNS = 3


def best_time(args, **kwargs):
    """Fastest wall-clock seconds of RUNS runs of a command that must succeed."""
    best = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        run_checked(args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best


def measure(model, tmp):
    """One table row: model, params, arena bytes, compile s, build s."""
    toml = MODELS_DIR / f"{model}.toml"
    out_dir = tmp / model
    with open(tmp / f"{model}.cpp", "w") as source:
        compile_s = best_time([BERTC, toml, "--target", "cpu", "--vram", VRAM, "--emit=cpp"],
                              stdout=source)
    build_s = best_time([BERTC, toml, "--target", "cpu", "--vram", VRAM, "-o", out_dir])
    plan = read_plan(out_dir)
    params = plan["categories"]["parameters"] // 4  # fp32: 4 bytes per parameter
    return [model, f"{params:,}", f"{plan['arena_bytes']:,}", f"{compile_s:.3f}", f"{build_s:.2f}"]


def main():
    require_bertc()
    with tempfile.TemporaryDirectory(prefix="bertc-bench-") as tmp:
        rows = [measure(model, Path(tmp)) for model in MODELS]
    print(f"bertc compile time, best of {RUNS}, --vram {VRAM}, {os.cpu_count()} cores, "
          f"{datetime.date.today()}")
    print_table(["model", "params", "arena_bytes", "compile (pipeline) s", "build (with g++) s"],
                rows)


if __name__ == "__main__":
    main()
