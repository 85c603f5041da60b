#!/usr/bin/env python3
"""The CPU trainer against PyTorch eager, side by side on the same model, data and threads.

The mini model (bench/models/mini.toml: 4 layers, hidden 256, batch 8, rows of 120..128
tokens, dropout 0.1, fp32, AdamW) trained by bertc's generated CPU trainer and by the plain
PyTorch reimplementation of Hugging Face's BertForSequenceClassification that the parity test
uses (test/reference/torch_bert.py, torch.optim.AdamW), each run under /usr/bin/time. A step's
time is the difference between a run of LONG and one of SHORT steps divided by LONG - SHORT,
so start-up (loading, compiling, allocating) is left out; peak RSS is the LONG run's. Both
get the same thread count through OMP_NUM_THREADS and OPENBLAS_NUM_THREADS (1, then the
machine's cores). With --repeat N each measurement runs N times, bertc's and PyTorch's
alternating so that both see the same changes in the machine's load; the table shows the
medians, and the ratio's range over the N pairs. Needs /usr/bin/time and a python with torch
(TORCH_PYTHON, default /usr/bin/python3).
Usage: python3 bench/cpu_vs_torch.py [--repeat N]
"""
import argparse
import datetime
import json
import statistics
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from common import BERTC, MODELS_DIR, REPO_ROOT, VRAM, print_table, require_bertc, run_checked

SHORT, LONG = 5, 45
TORCH_PYTHON = os.environ.get("TORCH_PYTHON", "/usr/bin/python3")


def hf_config(toml):
    """A bertc job's [model] and [head] as Hugging Face's config.json names them."""
    job = tomllib.loads(toml.read_text())
    model, head = job["model"], job["head"]
    return {"vocab_size": model["vocab"], "hidden_size": model["hidden"],
            "num_hidden_layers": model["layers"], "num_attention_heads": model["heads"],
            "intermediate_size": model["intermediate"],
            "max_position_embeddings": model["max_position"],
            "type_vocab_size": model["type_vocab"], "hidden_dropout_prob": model["dropout"],
            "attention_probs_dropout_prob": model["dropout"], "num_labels": head["labels"]}


def timed(args, threads):
    """(wall seconds, peak RSS MiB) of a command under /usr/bin/time, at `threads` threads."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    result = subprocess.run(["/usr/bin/time", "-f", "%e %M", *map(str, args)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"bench: {' '.join(map(str, args))} failed:\n{result.stderr}")
    seconds, kib = result.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(kib) / 1024


def per_step(command, threads):
    """(seconds per step, peak RSS MiB) of command(steps), from a SHORT and a LONG run."""
    short, _ = timed(command(SHORT), threads)
    long, rss = timed(command(LONG), threads)
    return (long - short) / (LONG - SHORT), rss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1,
                        help="alternating runs of each side per thread count (default 1)")
    args = parser.parse_args()
    if args.repeat < 1:
        sys.exit("bench: --repeat must be at least 1")
    require_bertc()
    for tool in ["/usr/bin/time", TORCH_PYTHON]:
        if not os.access(tool, os.X_OK):
            sys.exit(f"bench: {tool} not found")
    if subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True).returncode:
        sys.exit(f"bench: {TORCH_PYTHON} cannot import torch (set TORCH_PYTHON)")
    print(f"bench/cpu_vs_torch.py  {datetime.date.today()}  bertc={BERTC}  "
          f"steps {LONG} - {SHORT}, {args.repeat} run(s) each")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = tmp / "train.jsonl"
        run_checked([sys.executable, REPO_ROOT / "examples" / "tiny" / "make_data.py", "--rows",
                     8 * LONG, "--vocab", 1024, "--min-len", 120, "--max-len", 128, "--seed", 0,
                     "--out", data])
        config = tmp / "config.json"
        config.write_text(json.dumps(hf_config(MODELS_DIR / "mini.toml")))
        init = tmp / "init.safetensors"
        reference = REPO_ROOT / "test" / "reference" / "torch_bert.py"
        run_checked([TORCH_PYTHON, reference, "--config", config, "--make-init", init])
        run_checked([BERTC, MODELS_DIR / "mini.toml", "--target", "cpu", "--vram", VRAM, "-o",
                     tmp / "mini"])
        log = tmp / "log.jsonl"

        def bertc(steps):
            return [tmp / "mini" / "trainer", "--data", data, "--steps", steps, "--quiet",
                    "--log", log]

        def torch(steps):
            return [TORCH_PYTHON, reference, "--config", config, "--init", init, "--data", data,
                    "--batch", 8, "--steps", steps, "--lr", 2e-5, "--weight-decay", 0.01,
                    "--warmup", 0.1, "--log", log]

        rows = []
        for threads in sorted({1, os.cpu_count() or 1}):
            pairs = [(per_step(bertc, threads), per_step(torch, threads))
                     for _ in range(args.repeat)]
            ours = statistics.median(o for (o, _), _ in pairs)
            theirs = statistics.median(t for _, (t, _) in pairs)
            ratios = [o / t for (o, _), (t, _) in pairs]
            ratio = f"{ours / theirs:.2f}"
            if args.repeat > 1:
                ratio += f" ({min(ratios):.2f}-{max(ratios):.2f})"
            rows.append([threads, f"{ours:.3f}", f"{theirs:.3f}", ratio,
                         f"{max(r for (_, r), _ in pairs):.0f}",
                         f"{max(r for _, (_, r) in pairs):.0f}"])
        print_table(["threads", "bertc s/step", "PyTorch eager s/step", "bertc / PyTorch",
                     "bertc RSS MiB", "PyTorch RSS MiB"], rows)

if __name__ == "__main__":
    main()
