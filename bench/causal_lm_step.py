#!/usr/bin/env python3
"""Causal-LM training on the CUDA trainer: Llama-3.2-1B's shape, random weights, against
PyTorch eager + SDPA.

The job is bench/models/llama-3.2-1b.toml (full fine-tuning, AdamW, lr 2e-5, weight decay
0.01, precision "auto": the --arch's 16-bit type) at BATCH rows of SEQ tokens (default 4 x
2048: 8,192 tokens a step), its schedule constant and its rows read in file order, planned
from --config (default bench/models/hf/llama-3.2-1b/config.json: 1.24B parameters, grouped
-query attention, tied embeddings) and built with `bertc --target cuda --arch ARCH --vram
VRAM` (default 64GB, which an 80 GB H100 holds). Both sides start from one init and train on
one set of rows, both made here, deterministic:
  init           llama_init.py: the LlamaForCausalLM state dict as a BF16 safetensors file
                 (2.47 GB at 1.24B), normal(0, initializer_range) values, RMSNorm weights one;
  rows           STEPS x BATCH rows of SEQ token ids drawn uniformly from the vocabulary
                 (full length, no padding; the labels are the ids), one JSONL row each.
The trainer runs STEPS steps (default 20) from the init with a metrics log:
  batch          the plan's micro-batch x accumulation steps;
  est. step s    plan.json's estimated_step_seconds, the figure the fit driver ranks plans by;
  median step s  median of the log's "seconds" (wall time of an optimizer step), the first
                 WARMUP (default 5) dropped; tokens/s is BATCH x SEQ over it;
  first / last loss  the log's first and last step's loss (mean over the step's targets);
  peak GiB       bertc: the trainer's "device peak" line (cudaMemGetInfo's bytes in use after
                 every micro-step, the CUDA context and other processes included: run it on
                 an idle GPU). PyTorch: torch.cuda.max_memory_allocated, its tensors only;
  plan GiB       plan.json's peak_bytes, the arena plus the reserve for the process: what the
                 device peak is held to ("peak <= plan").
PyTorch, when torch (2.0 or newer) imports and sees a GPU: the plain-PyTorch Llama of
test/reference/torch_llama_model.py with its attention through
torch.nn.functional.scaled_dot_product_attention(is_causal=True) (no mask tensor: PyTorch may
choose its flash kernel), the same init, rows, micro-batch x accumulation, steps and warm-up,
torch.optim.AdamW with the HF Trainer's parameter groups and the job's lr and weight decay,
torch.autocast in bf16 where bertc's plan chose bf16 (else fp16 with a GradScaler), each step
timed between two torch.cuda.synchronize(). "vs PyTorch" is bertc's tokens/s over PyTorch's.
It runs after the trainer has exited, so that its CUDA context is not in the trainer's peak.
Exit status 3 (nothing run): the GPU has less memory than the plan's peak (use a smaller
--vram). --dry-run plans, builds and writes the init and the rows, then prints what it would
run (no GPU needed). --prepare DIR builds the trainer into DIR with the config and a
manifest.json (arch, vram, target, batch, seq and the plan's split, precision and peak) and
runs nothing (no GPU needed); --prebuilt DIR runs that trainer without calling bertc
(scripts/gpu-bundle.sh, scripts/gpu-check.sh). --target cuda-sim runs the CUDA trainer on the
simulated device, to try the script without a GPU (use a tiny --config: times mean nothing).
Usage: python3 bench/causal_lm_step.py [--batch 4] [--seq 2048] [--steps 20] [--warmup 5]
           [--vram 64GB] [--arch sm_90] [--config config.json] [--target cuda|cuda-sim]
           [--dry-run] [--prepare DIR | --prebuilt DIR]
"""
import argparse
import datetime
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from common import (BERTC, MODELS_DIR, REPO_ROOT, job_copy, print_table, read_plan,
                    require_bertc, run_checked)
from gpu_common import (add_run_modes, detect_arch, parse_run_args, exit_on_sigterm, gib, gpu_memory_bytes, read_manifest,
                        run_trainer, torch_missing, torch_precision, torch_steps, write_manifest)
from llama_init import load_init, write_init

MODEL = MODELS_DIR / "llama-3.2-1b.toml"
CONFIG = MODELS_DIR / "hf" / "llama-3.2-1b" / "config.json"
BATCH, SEQ, VRAM = 4, 2048, "64GB"  # the defaults of --batch, --seq and --vram
TOO_SMALL = 3  # the exit status when the GPU cannot hold the plan
SEED = 0  # of the init and of the rows


def job_text(text, config):
    """The job file's text for this bench: `from` the config's folder, the schedule constant
    (no warm-up), the rows in file order, so that PyTorch's steps can be the trainer's."""
    text = re.sub(r'from = "[^"]*"', f'from = "{config.resolve().parent}"', text)
    text = re.sub(r"^warmup = .*\n", "", text, flags=re.M)
    return text.replace('precision = "auto"',
                        'precision = "auto"\nschedule = "constant"\nshuffle = false')


def build(out, config, batch, seq, target, arch, vram):
    """(trainer, plan): the job at `batch` x `seq` built by bertc into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    job = job_copy(out, MODEL.stem, "job", seq, batch, lambda text: job_text(text, config))
    run_checked([BERTC, job, "--target", target, "--arch", arch, "--vram", vram, "-o", out])
    return out / "trainer", read_plan(out)


def prepare(out, args):
    """Builds the trainer into `out`, beside a copy of the config and the manifest
    --prebuilt reads."""
    _, plan = build(out, args.config, args.batch, args.seq, args.target, args.arch, args.vram)
    shutil.copyfile(args.config, out / "config.json")
    write_manifest(out, {"model": str(MODEL.relative_to(REPO_ROOT)), "name": args.name,
                         "config": "config.json",
                         "arch": args.arch, "vram": args.vram, "target": args.target,
                         "batch": args.batch, "seq": args.seq,
                         **{key: plan[key] for key in ("micro_batch", "accumulation_steps",
                                                       "precision", "peak_bytes")}})
    print(f"bench: built {args.name} at batch {args.batch} x seq {args.seq} for "
          f"{args.target} {args.arch} into {out}")


def write_rows(path, rows, seq, vocab):
    """`rows` rows of `seq` token ids drawn uniformly from [0, vocab), as JSONL; returns them."""
    rng = random.Random(SEED)
    ids = [[rng.randrange(vocab) for _ in range(seq)] for _ in range(rows)]
    path.write_text("".join(json.dumps({"input_ids": row}) + "\n" for row in ids))
    return ids


def sdpa_model(config, device):
    """The reference's LlamaForCausalLM with each layer's attention through
    scaled_dot_product_attention(is_causal=True): the rows have no padding, so the mask the
    reference builds is the causal one alone, which is_causal applies without a tensor."""
    import torch
    import torch.nn.functional as F
    import torch_llama_model

    class SdpaAttention(torch_llama_model.Attention):
        def forward(self, hidden_states, cos, sin, mask_bias):
            q, k, v = self.rotated_qkv(hidden_states, cos, sin)
            # Under autocast q and k leave the rotation in fp32 (cos and sin take the
            # embeddings' type), v its projection in bf16: SDPA takes one type.
            context = F.scaled_dot_product_attention(q.to(v.dtype), k.to(v.dtype), v,
                                                     is_causal=True)
            return self.project_context(context)

    with torch.device(device):
        model = torch_llama_model.ForCausalLM(config)
        for layer in model.model.layers:
            layer.self_attn = SdpaAttention(config)
    return model.train()


def run_torch(config_path, init, rows, plan, job, steps, warmup, device="cuda"):
    """((median step seconds, max_memory_allocated bytes, losses), description) of the job
    in PyTorch eager + SDPA under autocast. `device` is there so that the loop can be tried on a
    CPU."""
    sys.path.insert(0, str(REPO_ROOT / "test" / "reference"))
    import torch
    import torch_causal_lm
    import torch_llama_model

    config, _ = torch_causal_lm.load_config(config_path)
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    model = sdpa_model(config, device)
    load_init(model, init, config.tie_word_embeddings)
    optimizer = torch.optim.AdamW(
        torch_causal_lm.parameter_groups(model, job["train"].get("weight_decay", 0.0)),
        lr=job["train"]["lr"])
    dtype = torch.bfloat16 if torch_precision(plan) == "bf16" else torch.float16
    micro, accumulation = plan["micro_batch"], plan["accumulation_steps"]
    ids = torch.tensor(rows, device=device)
    seq = ids.shape[1]
    mask = torch.ones(micro, seq, dtype=torch.long, device=device)
    positions = torch.arange(seq, device=device).repeat(micro, 1)

    def micro_loss(step, index):
        batch = ids[(step * accumulation + index) * micro:][:micro]
        logits = model(batch, mask, positions)
        return torch_llama_model.causal_lm_loss(logits, batch, micro * (seq - 1))

    seconds, losses = torch_steps(micro_loss, optimizer, steps, accumulation, dtype, device)
    peak = torch.cuda.max_memory_allocated() if device == "cuda" else 0
    about = (f"torch {torch.__version__}, test/reference/torch_llama_model.py with "
             f"scaled_dot_product_attention(is_causal=True), {str(dtype).removeprefix('torch.')} "
             "autocast, AdamW")
    return (statistics.median(seconds[warmup:]), peak, losses), about


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, help=f"rows a step (default {BATCH})")
    parser.add_argument("--seq", type=int, help=f"tokens a row (default {SEQ})")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5, help="steps left out of the timing")
    parser.add_argument("--vram", help=f"bertc --vram (default {VRAM})")
    parser.add_argument("--arch", help="bertc --arch (default: from nvidia-smi's compute_cap)")
    parser.add_argument("--config", type=Path, help=f"a Llama config.json (default {CONFIG})")
    parser.add_argument("--target", choices=["cuda", "cuda-sim"],
                        help="cuda (default), or the simulated device")
    add_run_modes(parser, "the trainer")
    args = parse_run_args(parser)
    if args.prebuilt:
        if any(value is not None for value in (args.batch, args.seq, args.config, args.target)):
            sys.exit("bench: --batch, --seq, --config and --target are chosen when the trainer "
                     "is built (--prepare)")
        manifest = read_manifest(args.prebuilt, args.arch, args.vram)
        for key in ("name", "arch", "vram", "target", "batch", "seq"):
            setattr(args, key, manifest[key])
        args.config = args.prebuilt / manifest["config"]
        return args
    require_bertc()
    args.batch, args.seq = args.batch or BATCH, args.seq or SEQ
    args.vram, args.config, args.target = args.vram or VRAM, args.config or CONFIG, \
        args.target or "cuda"
    args.arch = args.arch or (detect_arch() if args.target == "cuda" else "sm_80")
    args.name = args.config.resolve().parent.name
    return args


def main():
    args = parse_args()
    if args.prepare:
        prepare(args.prepare, args)
        return
    exit_on_sigterm()
    config = json.loads(args.config.read_text())
    tokens = args.batch * args.seq
    bertc_run, torch_run, torch_error, about = None, None, None, None
    with tempfile.TemporaryDirectory(prefix="bertc-bench-") as tmp:
        tmp = Path(tmp)
        out = args.prebuilt or tmp / "out"
        if args.prebuilt:
            trainer, plan = out / "trainer", read_plan(out)
        else:
            trainer, plan = build(out, args.config, args.batch, args.seq, args.target,
                                  args.arch, args.vram)
        job = tomllib.loads((out / "job.toml").read_text())
        memory = gpu_memory_bytes() if args.target == "cuda" and not args.dry_run else None
        if memory is not None and memory < plan["peak_bytes"]:
            print(f"bench: not run: this GPU has {gib(memory)} GiB, under the plan's peak of "
                  f"{gib(plan['peak_bytes'])} GiB (--vram {args.vram})", file=sys.stderr)
            sys.exit(TOO_SMALL)
        start = time.perf_counter()
        init, data = tmp / "init.safetensors", tmp / "train.jsonl"
        parameters = write_init(init, config, SEED)
        rows = write_rows(data, args.steps * args.batch, args.seq, config["vocab_size"])
        print(f"bench: wrote the init ({parameters:,} parameters, "
              f"{init.stat().st_size / 1e9:.2f} GB) and {len(rows)} rows in "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        log = tmp / "bertc.log.jsonl"
        trainer_args = ["--data", data, "--init", init, "--steps", args.steps]
        if args.dry_run:
            print(f"would run: {trainer} {' '.join(map(str, trainer_args))} --log {log}")
        else:
            bertc_run = run_trainer(trainer, trainer_args, args.warmup, log)
            print(f"bertc: {bertc_run.step_seconds:.4f} s/step, "
                  f"{tokens / bertc_run.step_seconds:,.0f} tokens/s, device peak "
                  f"{gib(bertc_run.peak_bytes)} GiB, loss {bertc_run.losses[0]:.4f} -> "
                  f"{bertc_run.losses[-1]:.4f}", file=sys.stderr, flush=True)
        # PyTorch only once the trainer has exited, and only then imported: a CUDA context of
        # this process would count in the trainer's device peak (cudaMemGetInfo sees all).
        no_torch = torch_missing() or torch_sdpa_missing()
        if not no_torch and args.dry_run:
            print(f"would run PyTorch: micro-batch {plan['micro_batch']} x "
                  f"{plan['accumulation_steps']}, {torch_precision(plan)} autocast")
        elif not no_torch:
            try:
                torch_run, about = run_torch(args.config, init, rows, plan, job, args.steps,
                                             args.warmup)
            except Exception as error:  # reported under the table; bertc's row stays
                torch_error = f"PyTorch failed: {type(error).__name__}: {error}"

    mode = " (dry run: nothing measured)" if args.dry_run else ""
    mode += f" (trainer prebuilt in {args.prebuilt})" if args.prebuilt else ""
    print(f"Causal-LM training step, {args.name} ({parameters:,} parameters, random init), "
          f"batch {args.batch} x seq {args.seq}, {args.steps} steps (first "
          f"{args.warmup} skipped), {args.target} --vram {args.vram} --arch {args.arch}, "
          f"{bertc_run.gpu if bertc_run else '?'}, {datetime.date.today()}{mode}")
    if no_torch:
        print(f"PyTorch comparison not run: {no_torch}")
    elif about:
        print(f"PyTorch: {about}")
    print_table(["run", "batch", "precision", "est. step s", "median step s", "tokens/s",
                 "vs PyTorch", "first loss", "last loss", "peak GiB", "plan GiB", "peak <= plan"],
                table_rows(plan, tokens, bertc_run, torch_run))
    if torch_error:
        print(torch_error)
    sys.exit(1 if torch_error else 0)


def torch_sdpa_missing():
    """Why PyTorch has no scaled_dot_product_attention (before 2.0), or None."""
    import torch

    if hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        return None
    return f"torch {torch.__version__} has no scaled_dot_product_attention (2.0 or newer)"


def table_rows(plan, tokens, bertc_run, torch_run):
    """bertc's row, and PyTorch's where it ran."""
    batch = f"{plan['micro_batch']} x {plan['accumulation_steps']}"
    estimate = plan.get("estimated_step_seconds")
    step_s, peak = (bertc_run.step_seconds, bertc_run.peak_bytes) if bertc_run else (None, None)
    losses = bertc_run.losses if bertc_run else None
    torch_s, torch_peak, torch_losses = torch_run or (None, None, None)
    rows = [["bertc", batch, plan["precision"], f"{estimate:.4f}" if estimate else "-",
             f"{step_s:.4f}" if step_s else "-", f"{tokens / step_s:,.0f}" if step_s else "-",
             f"{torch_s / step_s:.2f}x" if step_s and torch_s else "-",
             f"{losses[0]:.4f}" if losses else "-", f"{losses[-1]:.4f}" if losses else "-",
             gib(peak) if peak else "-", gib(plan["peak_bytes"]),
             ("yes" if peak <= plan["peak_bytes"] else "NO") if peak else "-"]]
    if torch_s:
        rows.append(["PyTorch eager + SDPA", batch, torch_precision(plan), "-", f"{torch_s:.4f}",
                     f"{tokens / torch_s:,.0f}", "-", f"{torch_losses[0]:.4f}",
                     f"{torch_losses[-1]:.4f}", gib(torch_peak), "-", "-"])
    return rows


if __name__ == "__main__":
    main()
