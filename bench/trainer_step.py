#!/usr/bin/env python3
"""How fast a generated CPU trainer steps, and how much memory it holds, for tiny and mini.

For each model: generate rows with examples/tiny/make_data.py, compile with bertc, train
STEPS steps with a metrics log, drop the first WARMUP steps and report the median step time
(the log's "seconds") and the median tokens/s. Tokens of a step = sum over its micro-batches
of rows x the micro-batch's padded length (its longest row). The bench models read the data
in file order (shuffle = false) and the data holds exactly one epoch, so the padded length of
every step is known from the file. Peak RSS is the trainer's ru_maxrss from wait4(), the
counter `/usr/bin/time -v` prints as "Maximum resident set size".
Usage: python3 bench/trainer_step.py
"""
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import BERTC, MODELS_DIR, REPO_ROOT, VRAM, print_table, read_plan, require_bertc, run_checked

WARMUP = 5
# model: (steps, data vocab, shortest row, longest row); rows include [CLS] and [SEP]s.
MODELS = {
    "tiny": (200, 64, 6, 16),
    "mini": (30, 1024, 120, 128),
}


def padded_tokens_per_step(data_file, plan, steps):
    """Tokens each step computes on (padding included), replaying the batcher in file order."""
    lengths = [len(json.loads(line)["input_ids"]) for line in open(data_file) if line.strip()]
    lengths = [min(n, plan["seq_len"]) for n in lengths]
    assert len(lengths) == steps * plan["micro_batch"] * plan["accumulation_steps"]
    tokens, cursor = [], 0
    for _ in range(steps):
        step_tokens = 0
        for _ in range(plan["accumulation_steps"]):
            micro = lengths[cursor:cursor + plan["micro_batch"]]
            cursor += len(micro)
            step_tokens += len(micro) * max(micro)
        tokens.append(step_tokens)
    return tokens


def run_trainer(trainer, data_file, steps, log_file):
    """Runs the trainer to the end; returns its peak RSS in bytes."""
    with subprocess.Popen([str(trainer), "--data", str(data_file), "--steps", str(steps),
                           "--log", str(log_file)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        stderr = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"bench: {trainer} failed ({proc.returncode}):\n{stderr}")
    return usage.ru_maxrss * 1024  # Linux reports kilobytes


def measure(model, tmp):
    """One table row for `model`."""
    steps, vocab, min_len, max_len = MODELS[model]
    out_dir, data_file, log_file = tmp / model, tmp / f"{model}.jsonl", tmp / f"{model}.log"
    run_checked([BERTC, MODELS_DIR / f"{model}.toml", "--target", "cpu", "--vram", VRAM,
                 "-o", out_dir])
    plan = read_plan(out_dir)
    rows = steps * plan["micro_batch"] * plan["accumulation_steps"]
    run_checked([sys.executable, REPO_ROOT / "examples" / "tiny" / "make_data.py", "--rows", rows,
                 "--vocab", vocab, "--min-len", min_len, "--max-len", max_len, "--seed", 0,
                 "--out", data_file])
    peak_rss = run_trainer(out_dir / "trainer", data_file, steps, log_file)
    seconds = [json.loads(line)["seconds"] for line in open(log_file)][WARMUP:]
    tokens = padded_tokens_per_step(data_file, plan, steps)[WARMUP:]
    batch = plan["micro_batch"] * plan["accumulation_steps"]
    return [model, batch, plan["seq_len"], f"{statistics.mean(tokens) / batch:.1f}",
            f"{statistics.median(seconds):.4f}",
            f"{statistics.median(t / s for t, s in zip(tokens, seconds)):,.0f}",
            f"{plan['arena_bytes'] / 2**20:.1f}", f"{peak_rss / 2**20:.1f}"]


def main():
    require_bertc()
    with tempfile.TemporaryDirectory(prefix="bertc-bench-") as tmp:
        rows = [measure(model, Path(tmp)) for model in MODELS]
    runs = ", ".join(f"{m} {MODELS[m][0]} steps" for m in MODELS)
    print(f"CPU trainer step ({runs}; first {WARMUP} skipped), {os.cpu_count()} cores, "
          f"{datetime.date.today()}")
    print_table(["model", "batch", "seq_len", "mean padded seq", "median step s", "tokens/s",
                 "arena MiB", "peak RSS MiB"], rows)


if __name__ == "__main__":
    main()
