#!/usr/bin/env python3
"""bertc's CUDA attention against PyTorch's scaled_dot_product_attention, kernel against kernel.

Runs bertc_attention_time (bench/attention_time.cpp) with --json: per seq_len, the median of
RUNS runs after WARMUP of bertc's fused attention kernels and of its tensor-core ones (head
chunk = heads, and heads / 2), forward and forward+backward, q, k, v and dctx
[batch, seq, hidden] with no padding. Where torch imports and sees a GPU, it times
torch.nn.functional.scaled_dot_product_attention the same way: q, k, v leaf tensors
[batch, seq, hidden] (requires_grad) viewed as [batch, heads, seq, head_dim], no mask (so
PyTorch may pick its flash kernel), the same dtype and dropout_p; the forward with autograd
recording (as in training), the forward+backward as that forward then torch.autograd.grad
with a dctx of the same layout; each run between two CUDA events. The output's copy back to
[batch, seq, hidden] is not timed (bertc's kernels write that layout themselves).
"best / SDPA" is bertc's fastest kernel's time over PyTorch's: below 1, bertc is faster.
Where the fused kernels' products run on tensor cores it then prints the rate they reached:
their products' flops over the fused times, as DeviceModel.cpp prices them (2 products
forward, 7 backward, over the head dimension rounded up to 32 or 64).
--dry-run prints what it would run and runs nothing (no GPU needed).
Usage: python3 bench/attention_vs_sdpa.py [--program PATH] [--batch 32] [--seqs 128 512]
           [--hidden 768] [--heads 12] [--precision bf16|fp16|fp32] [--dropout 0.1]
           [--runs 20] [--warmup 5] [--dry-run]
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from common import REPO_ROOT, print_table

# The timer: --program, else $BERTC_ATTENTION_TIME, else the default build's.
PROGRAM = Path(os.environ.get("BERTC_ATTENTION_TIME",
                              REPO_ROOT / "build" / "bin" / "bertc_attention_time"))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--program", type=Path, default=PROGRAM)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seqs", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--precision", choices=["bf16", "fp16", "fp32"], default="bf16")
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--dry-run", action="store_true")
    return parser.parse_args()


def program_command(args):
    return [str(args.program), "--batch", str(args.batch), "--seq", ",".join(map(str, args.seqs)),
            "--hidden", str(args.hidden), "--heads", str(args.heads), "--precision", args.precision,
            "--dropout", str(args.dropout), "--runs", str(args.runs), "--warmup", str(args.warmup),
            "--json"]


def torch_missing():
    """Why the SDPA comparison cannot run, or None when it can."""
    try:
        import torch
    except ImportError as error:
        return f"cannot import {error.name}"
    if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        return f"torch {torch.__version__} has no scaled_dot_product_attention (2.0 and newer)"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


def run_bertc(args):
    """The timer's JSON; exits with its message when it fails."""
    if not os.access(args.program, os.X_OK):
        sys.exit(f"bench: {args.program} not found; build it with: "
                 f"ninja -C {REPO_ROOT / 'build'} bertc_attention_time (needs CUDA)")
    result = subprocess.run(program_command(args), capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"bench: {args.program.name} failed ({result.returncode}):\n"
                 f"{(result.stderr or result.stdout)[-2000:]}")
    return json.loads(result.stdout)


def median_ms(torch, work, runs, warmup):
    """Median milliseconds of `runs` calls of `work`, each between two CUDA events, after
    `warmup` untimed calls."""
    for _ in range(warmup):
        work()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        work()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def time_sdpa(args, seq):
    """(forward ms, forward+backward ms) of PyTorch's SDPA at one seq_len."""
    import torch
    import torch.nn.functional as F

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.precision]
    torch.manual_seed(0)
    head_dim = args.hidden // args.heads

    def tensor(low, high, grad):
        x = torch.empty(args.batch, seq, args.hidden, device="cuda", dtype=dtype)
        return x.uniform_(low, high).requires_grad_(grad)

    def heads(x):  # [batch, seq, hidden] as [batch, heads, seq, head_dim], no copy
        return x.view(args.batch, seq, args.heads, head_dim).transpose(1, 2)

    # As bertc_attention_time: q and k in [-0.5, 0.5), v and dctx in [-1, 1).
    q, k, v = tensor(-0.5, 0.5, True), tensor(-0.5, 0.5, True), tensor(-1, 1, True)
    dctx = heads(tensor(-1, 1, False))

    def forward():
        return F.scaled_dot_product_attention(heads(q), heads(k), heads(v),
                                              dropout_p=args.dropout)

    def forward_backward():
        torch.autograd.grad(forward(), (q, k, v), dctx)

    return (median_ms(torch, forward, args.runs, args.warmup),
            median_ms(torch, forward_backward, args.runs, args.warmup))


def ms(value):
    return f"{value:.3f}" if value is not None else "-"


def ratio(ours, theirs):
    return f"{ours / theirs:.2f}" if theirs else "-"


# The fused kernels' products: the forward's q k^T and P v, the backward's 4 in the key
# kernel (s, dP, dv, dk) and 3 in the query kernel (s, dP, dq) (dialect/lib/AttentionCost.cpp).
FORWARD_PRODUCTS, BACKWARD_PRODUCTS = 2, 7


def product_rates(args, seq, fused):
    """TFLOP/s of the fused forward's and backward's products at their measured times."""
    head_dim = args.hidden // args.heads
    padded = 32 if head_dim <= 32 else 64
    flops = 2 * args.batch * args.heads * seq * seq * padded  # one product
    forward_ms = fused["forward_ms"]
    backward_ms = fused["forward_backward_ms"] - forward_ms
    return (FORWARD_PRODUCTS * flops / forward_ms / 1e9,
            BACKWARD_PRODUCTS * flops / backward_ms / 1e9 if backward_ms > 0 else None)


def main():
    args = parse_args()
    missing = torch_missing()
    if args.dry_run:
        found = "" if os.access(args.program, os.X_OK) else "   (not built yet)"
        print(f"would run: {shlex.join(program_command(args))}{found}")
        if missing:
            print(f"PyTorch: not available ({missing}): would print bertc's times alone")
        else:
            print(f"would time torch.nn.functional.scaled_dot_product_attention at batch "
                  f"{args.batch}, seq {args.seqs}, hidden {args.hidden}, {args.heads} heads, "
                  f"{args.precision}, dropout_p {args.dropout}, median of {args.runs} runs after "
                  f"{args.warmup} warm-up")
        return
    bertc = run_bertc(args)
    print(f"Attention on {bertc['device']}: batch {args.batch}, hidden {args.hidden}, "
          f"{args.heads} heads, {args.precision}, dropout {args.dropout}, no padding; ms, median "
          f"of {args.runs} runs after {args.warmup} warm-up")
    print(f"bertc's fused kernels: products on {bertc['fused_products']}")
    grouped = bertc["grouped_gemms"]
    print(f"Attention products: {grouped['pointer_arrays']} GEMMs over a chunk's heads (cuBLASLt "
          f"pointer arrays), {grouped['per_head']} as a GEMM per head")
    if missing:
        print(f"PyTorch: not available ({missing}); bertc's times alone")
    else:
        import torch
        print(f"PyTorch {torch.__version__}: torch.nn.functional.scaled_dot_product_attention, "
              f"its own choice of backend")
    rows = []
    for seq in args.seqs:
        ours = {r["head_chunk"]: r for r in bertc["results"] if r["seq"] == seq}
        fused, chunked = ours[0], ours[args.heads]
        best = min(ours.values(), key=lambda r: r["forward_backward_ms"])
        best_name = "fused" if best["head_chunk"] == 0 else f"tensor-core/{best['head_chunk']}"
        sdpa = (None, None) if missing else time_sdpa(args, seq)
        rows.append([seq, ms(fused["forward_ms"]), ms(fused["forward_backward_ms"]),
                     ms(chunked["forward_ms"]), ms(chunked["forward_backward_ms"]),
                     ms(sdpa[0]), ms(sdpa[1]), best_name,
                     ratio(min(r["forward_ms"] for r in ours.values()), sdpa[0]),
                     ratio(best["forward_backward_ms"], sdpa[1])])
    print_table(["seq", "fused fwd", "fused fwd+bwd", f"tensor-core/{args.heads} fwd",
                 f"tensor-core/{args.heads} fwd+bwd", "SDPA fwd", "SDPA fwd+bwd",
                 "bertc best (fwd+bwd)", "best / SDPA fwd", "best / SDPA fwd+bwd"], rows)
    if bertc["fused_products"] != "tensor cores":
        return
    for seq in args.seqs:
        fused = next(r for r in bertc["results"] if r["seq"] == seq and r["head_chunk"] == 0)
        forward, backward = product_rates(args, seq, fused)
        print(f"fused products at seq {seq}: forward {forward:.2f} TFLOP/s, backward "
              + (f"{backward:.2f} TFLOP/s" if backward else "-"))


if __name__ == "__main__":
    main()
