#!/usr/bin/env python3
"""LoRA and QLoRA plans for real decoder LLMs: the longest context at batch 1 per VRAM budget.

Each model is bench/models/NAME.toml (causal-LM fine-tuning planned from its Hugging Face
config.json alone, bench/models/hf/NAME/) with a [lora] table as the QLoRA recipe and
Unsloth's published figures have it: rank 32, alpha 32, every linear layer of the decoder
(q, k, v, o, gate, up, down: "all-linear"), on a base stored in NF4 with double
quantization (qlora) or in the precision's 16 bits (lora). Nothing runs on a GPU:
`--target cuda` plans a CUDA trainer (bertc must have been built with nvcc).
For each model x mode x budget on --arch (default sm_89, an RTX 4060/4070/4090's):
    bertc JOB --target cuda --arch ARCH --vram V --host-ram H --max-seq --offload-optimizer on
gives the longest seq_len at micro-batch 1 (up to the model's max_position), the adapters'
fp32 masters and AdamW state in host memory (the least on the device), then two compiles
with the same flags check it (-emit=plan at seq V must fit, at V + 1 must not) and the first
one's plan gives the row's precision, recomputation, arena and estimated step (both at the
precision --max-seq plans with: the arch's 16-bit one). A plan of Llama-3.1-8B takes minutes
on a 2-core machine: --no-details runs --max-seq alone.
Llama-3.1-8B QLoRA's table stands beside Unsloth's published limits (their blog's
"Llama 3.1 (8B) max context length" table, QLoRA rank 32 on all linear layers, batch 1)
and those of Hugging Face + FlashAttention-2 in the same table.
--host-ram (default 64GB) is what host memory the plans may take, fixed so that they do not
depend on this machine. --offload-checkpoints on|auto (default off) passes bertc's flag: what
the backward reads of the forward then waits in host memory (Unsloth's offloaded gradient
checkpointing does so with each layer's input); so does --offload-embeddings on|auto (the
frozen token embeddings in host memory, the batch's rows gathered from there). --models, --modes and --budgets take subsets; --jobs N runs N
searches at once; each bertc run is logged on stderr as it ends.
Usage: python3 bench/lora_plans.py [--models llama-3.1-8b] [--modes qlora,lora]
       [--budgets 6GB,8GB] [--arch sm_89] [--jobs 2] [--host-ram 64GB] [--no-check]
       [--no-details] [--offload-checkpoints on] [--offload-embeddings on]
"""
import argparse
import concurrent.futures
import datetime
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from common import job_copy, print_table, require_bertc, BERTC
from decoder_plans import FITS, LIMIT_FLAGS, OVER_BUDGET, detail_cells, max_seq, plan

MODELS = ["llama-3.1-8b", "llama-3.2-1b", "llama-3.2-3b", "qwen2.5-0.5b", "qwen2.5-1.5b",
          "qwen2.5-7b"]
MODES = ["qlora", "lora"]
BUDGETS = ["6GB", "8GB", "12GB", "16GB", "24GB"]
# Llama-3.1-8B, QLoRA rank 32 on all linear layers, batch 1: the longest context in tokens
# that Unsloth publishes per GPU memory, and Hugging Face + FlashAttention-2's (None: OOM).
UNSLOTH_8B = {"8GB": 2972, "12GB": 21848, "16GB": 40724, "24GB": 78475}
HF_FA2_8B = {"8GB": None, "12GB": 932, "16GB": 2551, "24GB": 5789}


def lora_table(mode):
    """The [lora] table a job of `mode` ends with."""
    base = 'base = "nf4"\ndouble_quant = true\n' if mode == "qlora" else ""
    return f'\n[lora]\nr = 32\nalpha = 32\ntargets = "all-linear"\n{base}'


def job(tmp, model, mode, seq):
    return job_copy(tmp, model, f"{model}-{mode}-{seq}", seq, 1,
                    lambda text: text + lora_table(mode))


def search(tmp, model, mode, budget, arch, host_ram, offload_flags, check, details):
    """(longest seq_len, seconds, the Plan at it or None, what a check found or '')."""
    precision = "fp16" if arch == "sm_75" else "bf16"
    limit_flags = [*LIMIT_FLAGS, *offload_flags]
    flags = ["--host-ram", host_ram, *limit_flags]
    out = Path(tmp) / f"{model}-{mode}-{budget}"
    longest, seconds = max_seq(job(tmp, model, mode, 1024), budget, arch, flags, out / "ms")
    if longest is None:  # then `seconds` is bertc's message
        print(f"  {model} {mode} {budget}: --max-seq failed", file=sys.stderr, flush=True)
        return None, seconds, None, ""
    print(f"  {model} {mode} {budget}: --max-seq {longest} in {seconds:.0f} s", file=sys.stderr,
          flush=True)
    if not details:
        return longest, seconds, None, ""
    # The compiles either side plan at the precision --max-seq took (the arch's 16-bit one).
    compile_flags = [*limit_flags, "--precision", precision]
    at = plan(job(tmp, model, mode, longest), budget, arch, host_ram, out / "at",
              compile_flags) if longest else None
    found = ""
    if check and longest:
        above = plan(job(tmp, model, mode, longest + 1), budget, arch, host_ram, out / "above",
                     compile_flags)
        if at.rc != FITS or above.rc != OVER_BUDGET:
            found = f"exit {at.rc} at {longest}, {above.rc} at {longest + 1}"
    return longest, seconds, at, found


def print_rows(model, mode, budgets, results, check):
    header = ["budget", "max seq"]
    if model == "llama-3.1-8b" and mode == "qlora":
        header += ["Unsloth", "HF + FA2", "x Unsloth"]
    header += ["micro x acc", "precision", "recompute", "AdamW", "LM head chunk", "arena GB",
               "est. step s", "search s"]
    if check:
        header.append("V fits, V+1 not")
    rows = []
    for budget in budgets:
        longest, seconds, at, found = results[model, mode, budget]
        if longest is None:
            rows.append([budget, f"failed: {seconds}"] + [""] * (len(header) - 2))
            continue
        cells = [budget, longest or "none"]
        if "Unsloth" in header:
            theirs = UNSLOTH_8B.get(budget)
            hf = HF_FA2_8B.get(budget, "-")
            cells += [theirs or "-", hf or "OOM",
                      f"{longest / theirs:.1f}" if theirs and longest else "-"]
        if at is not None and at.fits:
            # detail_cells: fits, split, precision, recompute, AdamW, chunk, arena, step, plan s.
            cells += detail_cells(at)[1:8]
        else:
            cells += ["-"] * 7
        cells.append(f"{seconds:.0f}")
        if check:
            cells.append(found or ("yes" if longest else "-"))
        rows.append(cells)
    base = "NF4 base, double quant" if mode == "qlora" else "16-bit base"
    print(f"\n{model}, {mode} (r 32, alpha 32, all-linear, {base}), batch 1:")
    print_table(header, rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--budgets", default=",".join(BUDGETS))
    parser.add_argument("--arch", default="sm_89")
    parser.add_argument("--host-ram", default="64GB")
    parser.add_argument("--offload-checkpoints", default="off", choices=["off", "on", "auto"],
                        help="bertc's --offload-checkpoints for every search and compile")
    parser.add_argument("--offload-embeddings", default="off", choices=["off", "on", "auto"],
                        help="bertc's --offload-embeddings for every search and compile")
    parser.add_argument("--jobs", type=int, default=1, help="searches at once")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the compile at one token more than the longest seq_len")
    parser.add_argument("--no-details", action="store_true",
                        help="--max-seq alone: no compile at the longest seq_len (its plan's "
                             "details and estimate) nor at one token more")
    args = parser.parse_args()
    models, modes, budgets = (s.split(",") for s in (args.models, args.modes, args.budgets))
    check = not args.no_check and not args.no_details
    require_bertc()
    start = time.perf_counter()
    print(f"bench/lora_plans.py  {datetime.date.today()}  {platform.node()}, "
          f"{os.cpu_count()} cores  bertc={BERTC}  --arch {args.arch}  --host-ram {args.host_ram}  "
          f"--offload-checkpoints {args.offload_checkpoints}  "
          f"--offload-embeddings {args.offload_embeddings}")
    offload_flags = ["--offload-checkpoints", args.offload_checkpoints,
                     "--offload-embeddings", args.offload_embeddings]
    with tempfile.TemporaryDirectory() as tmp:
        keys = [(m, mode, b) for m in models for mode in modes for b in budgets]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {key: pool.submit(search, tmp, *key, args.arch, args.host_ram,
                                        offload_flags, check, not args.no_details)
                       for key in keys}
            results = {key: future.result() for key, future in futures.items()}
        for m in models:
            for mode in modes:
                print_rows(m, mode, budgets, results, check)
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
