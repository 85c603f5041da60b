#!/usr/bin/env python3
"""CUDA trainer step time, throughput and device peak for BERT-base, against PyTorch eager + AMP.

For each seq_len (default 128 and 512): a copy of bench/models/bert-base.toml (bert-base-cased
dims, batch 32, dropout 0.1) at that seq_len with precision "auto" (the --arch's 16-bit type),
built with `bertc --target cuda --arch ARCH --vram VRAM`; STEPS x batch full-length rows (no
padding) from examples/tiny/make_data.py; the trainer runs STEPS steps with a metrics log.
  attention      plan.json's attention_head_chunk: "fused" (0, no [seq, seq] scores kept) or
                 "GEMMs/N" (cuBLASLt GEMMs over N heads at a time);
  batch          the plan's micro-batch x accumulation steps;
  recompute      plan.json's recompute_flops / step_flops;
  est. step s    plan.json's estimated_step_seconds, the figure the fit driver ranks plans by;
  median step s  median of the log's "seconds" (wall time of an optimizer step), first WARMUP
                 steps dropped; samples/s is batch / median step s;
  peak GiB       bertc: the trainer's "device peak" line, cudaMemGetInfo's in-use bytes sampled
                 after every micro-step: the CUDA context included, and other processes too (run
                 it on an idle GPU). PyTorch: torch.cuda.max_memory_allocated, its tensors only
                 (no CUDA context, no allocator cache), so lower than a device figure would be;
  plan GiB       plan.json's peak_bytes: arena_bytes plus the reserve the cuda target keeps for
                 the CUDA context and libraries, i.e. the plan's figure for the whole process, the
                 one the device peak is held to.
PyTorch, when torch and transformers import and torch sees a GPU: BertForSequenceClassification
from a BertConfig with the same dims (random init, nothing downloaded), AdamW(lr 2e-5,
weight_decay 0.01), torch.autocast in bf16 when bertc's plan chose bf16, else fp16 with a
GradScaler, at the plan's micro-batch x accumulation, same steps and warm-up, each step timed
between two torch.cuda.synchronize(). "vs PyTorch" is bertc's samples/s over PyTorch's.
--both-attentions also builds and runs each seq_len with the attention the plan did not choose
(--attention-head-chunk: 0 where it chose GEMMs over head chunks, else all the heads at a time),
a row "bertc, forced", so that one run shows which of the two makes the faster step.
--dry-run plans, builds and writes the data, then prints what it would run (no GPU needed).
--prepare DIR plans and builds the trainers into DIR with a manifest.json (arch, vram, and per
trainer its seq_len, directory, attention, micro-batch x accumulation, precision and peak
bytes) and runs nothing (no GPU needed); --prebuilt DIR
runs those trainers without calling bertc, for a GPU machine that cannot build bertc
(scripts/gpu-bundle.sh, scripts/gpu-check.sh).
Usage: python3 bench/cuda_step.py [--seqs 128 512] [--steps 30] [--warmup 5] [--vram 16GB]
                                  [--arch sm_90] [--both-attentions] [--dry-run]
                                  [--prepare DIR | --prebuilt DIR]
"""
import argparse
import datetime
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from common import (BERTC, MODELS_DIR, REPO_ROOT, job_copy, print_table, read_plan,
                    require_bertc, run_checked)
from gpu_common import (add_run_modes, detect_arch, parse_run_args, exit_on_sigterm, gib, read_manifest, run_trainer,
                        torch_missing, torch_precision, torch_steps, write_manifest)

MODEL = MODELS_DIR / "bert-base.toml"
SEQS, VRAM = [128, 512], "16GB"  # the defaults of --seqs and --vram


def attention_name(plan):
    """How a plan runs attention, as the table shows it."""
    chunk = plan["attention_head_chunk"]
    return "fused" if chunk == 0 else f"GEMMs/{chunk}"


def build(tmp, seq, arch, vram, head_chunk=None):
    """(trainer, plan) for bert-base at `seq`, precision auto, built for the cuda target; with
    `head_chunk`, its attention forced to that --attention-head-chunk, or None when that does
    not fit --vram."""
    toml = job_copy(tmp, MODEL.stem, f"bert-base-{seq}", seq, batch_of(MODEL))
    name, forced = f"seq{seq}", []
    if head_chunk is not None:
        name += "-fused" if head_chunk == 0 else f"-heads{head_chunk}"
        forced = [f"--attention-head-chunk={head_chunk}"]
    out = tmp / name
    args = [BERTC, toml, "--target", "cuda", "--arch", arch, "--vram", vram, *forced, "-o", out]
    result = subprocess.run(list(map(str, args)), capture_output=True, text=True)
    if result.returncode == 3 and forced:
        return None  # the forced attention does not fit the budget
    if result.returncode != 0:
        sys.exit(f"bench: {' '.join(map(str, args))} failed ({result.returncode}):\n"
                 f"{result.stderr}")
    return out / "trainer", read_plan(out)


def batch_of(model):
    """The [train] batch of a model file."""
    return tomllib.loads(model.read_text())["train"]["batch"]


def build_runs(tmp, seqs, arch, vram, both_attentions):
    """[(seq, forced, trainer, plan)]: per seq_len the plan's own choice, and with
    `both_attentions` the same job with the attention it did not choose."""
    heads = tomllib.loads(MODEL.read_text())["model"]["heads"]
    runs = []
    for seq in seqs:
        trainer, plan = build(tmp, seq, arch, vram)
        runs.append((seq, False, trainer, plan))
        if both_attentions:
            other = 0 if plan["attention_head_chunk"] > 0 else heads
            forced = build(tmp, seq, arch, vram, other)
            if forced:
                runs.append((seq, True, *forced))
            else:
                print(f"bench: seq {seq} with --attention-head-chunk={other} does not fit "
                      f"--vram {vram}: no forced row", file=sys.stderr)
    return runs


def prepare(out, seqs, arch, vram, both_attentions):
    """Builds the trainers for `seqs` into `out` and writes the manifest --prebuilt reads."""
    out.mkdir(parents=True, exist_ok=True)
    trainers = [{"seq": seq, "dir": trainer.parent.name, "forced": forced,
                 "attention": attention_name(plan),
                 **{key: plan[key] for key in ("micro_batch", "accumulation_steps", "precision",
                                               "peak_bytes")}}
                for seq, forced, trainer, plan in build_runs(out, seqs, arch, vram,
                                                             both_attentions)]
    write_manifest(out, {"model": str(MODEL.relative_to(REPO_ROOT)), "arch": arch, "vram": vram,
                         "trainers": trainers})
    print(f"bench: built {', '.join(f'seq {seq}' for seq in seqs)} for {arch} into {out}"
          + (" (both attentions)" if both_attentions else ""))


def load_prebuilt(directory, seqs, arch, vram):
    """(arch, vram, [(seq, forced, trainer, plan)]) of the trainers `prepare` built into
    `directory`; `seqs`, `arch` and `vram` (None: the manifest's) must be among what it holds."""
    manifest = read_manifest(directory, arch, vram)
    if not isinstance(manifest.get("trainers"), list):
        sys.exit(f"bench: {directory} was prepared by an older bench/cuda_step.py: prepare it "
                 "again (scripts/gpu-bundle.sh)")
    held = sorted({entry["seq"] for entry in manifest["trainers"]})
    missing = [seq for seq in seqs or [] if seq not in held]
    if missing:
        sys.exit(f"bench: {directory} has no trainer for seq {missing} (it has {held})")
    return manifest["arch"], manifest["vram"], [
        (entry["seq"], entry["forced"], directory / entry["dir"] / "trainer",
         read_plan(directory / entry["dir"]))
        for entry in manifest["trainers"] if not seqs or entry["seq"] in seqs]


def run_torch(dims, seq, plan, steps, warmup, device="cuda"):
    """(median step seconds, max_memory_allocated bytes, description) of the same job in
    PyTorch eager with autocast. `device` is there so the loop can be tried on a CPU."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=dims["vocab"], hidden_size=dims["hidden"], num_hidden_layers=dims["layers"],
        num_attention_heads=dims["heads"], intermediate_size=dims["intermediate"],
        max_position_embeddings=dims["max_position"], type_vocab_size=dims["type_vocab"],
        hidden_dropout_prob=dims["dropout"], attention_probs_dropout_prob=dims["dropout"],
        num_labels=dims["labels"])
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    model = transformers.BertForSequenceClassification(config).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    dtype = torch.bfloat16 if torch_precision(plan) == "bf16" else torch.float16
    micro, accumulation = plan["micro_batch"], plan["accumulation_steps"]
    batch = {"input_ids": torch.randint(5, dims["vocab"], (micro, seq), device=device),
             "token_type_ids": torch.zeros(micro, seq, dtype=torch.long, device=device),
             "attention_mask": torch.ones(micro, seq, dtype=torch.long, device=device),
             "labels": torch.randint(0, dims["labels"], (micro,), device=device)}
    seconds, _ = torch_steps(lambda *_: model(**batch).loss, optimizer, steps, accumulation,
                             dtype, device)
    peak = torch.cuda.max_memory_allocated() if device == "cuda" else 0
    attention = getattr(model.config, "_attn_implementation", "?")
    about = (f"torch {torch.__version__}, transformers {transformers.__version__}, "
             f"{attention} attention, {str(dtype).removeprefix('torch.')} autocast")
    return statistics.median(seconds[warmup:]), peak, about


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seqs", type=int, nargs="+",
                        help=f"default {SEQS[0]} {SEQS[1]}, or what --prebuilt holds")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--vram", help=f"default {VRAM}, or what --prebuilt was built with")
    parser.add_argument("--arch", help="bertc --arch (default: from nvidia-smi's compute_cap)")
    parser.add_argument("--both-attentions", action="store_true",
                        help="also run each seq_len with the attention its plan did not choose")
    add_run_modes(parser, "the trainers")
    args = parse_run_args(parser)
    if args.prebuilt:
        if args.both_attentions:
            sys.exit("bench: --both-attentions is chosen when the trainers are built (--prepare)")
        arch, vram, runs = load_prebuilt(args.prebuilt, args.seqs, args.arch, args.vram)
    else:
        require_bertc()
        arch, vram, seqs = args.arch or detect_arch(), args.vram or VRAM, args.seqs or SEQS
    if args.prepare:
        prepare(args.prepare, seqs, arch, vram, args.both_attentions)
        return
    exit_on_sigterm()
    job = tomllib.loads(MODEL.read_text())
    dims = {**job["model"], "labels": job["head"]["labels"]}
    measured, torch_errors, gpu = {}, [], "?"
    with tempfile.TemporaryDirectory(prefix="bertc-bench-") as tmp:
        tmp = Path(tmp)
        if not args.prebuilt:
            runs = build_runs(tmp, seqs, arch, vram, args.both_attentions)
        data = {}
        for seq, forced, trainer, plan in runs:
            batch = plan["micro_batch"] * plan["accumulation_steps"]
            if seq not in data:
                data[seq] = tmp / f"seq{seq}.jsonl"
                run_checked([sys.executable, REPO_ROOT / "examples" / "tiny" / "make_data.py",
                             "--rows", args.steps * batch, "--vocab", dims["vocab"],
                             "--min-len", seq, "--max-len", seq, "--seed", 0, "--out", data[seq]])
            log = tmp / f"{trainer.parent.name}.log.jsonl"
            if args.dry_run:
                print(f"would run: {trainer} --data {data[seq]} --steps {args.steps} --log {log}")
                continue
            step_s, peak, gpu, _ = run_trainer(
                trainer, ["--data", data[seq], "--steps", args.steps], args.warmup, log)
            measured[trainer] = (step_s, peak)
            print(f"seq {seq}: bertc{', forced' if forced else ''} ({attention_name(plan)}) "
                  f"{step_s:.4f} s/step, {batch / step_s:,.1f} samples/s, "
                  f"device peak {gib(peak)} GiB", file=sys.stderr, flush=True)

        # PyTorch after every bertc run, so that a slow or failing PyTorch costs no bertc row,
        # and only then imported: a CUDA context of this process would count in the trainers'
        # device peak (cudaMemGetInfo sees all processes). Its job is the plan's own choice's.
        no_torch = torch_missing("transformers")
        torch_rows, about = {}, None
        for seq, forced, _, plan in runs:
            if no_torch or forced:
                continue
            if args.dry_run:
                print(f"would run PyTorch at seq {seq}: micro-batch {plan['micro_batch']} x "
                      f"{plan['accumulation_steps']}, {torch_precision(plan)} autocast")
                continue
            try:
                step_s, peak, about = run_torch(dims, seq, plan, args.steps, args.warmup)
                torch_rows[seq] = (step_s, peak, plan)
            except Exception as error:  # reported under the table; bertc's rows stay
                torch_errors.append(f"PyTorch at seq {seq} failed: {type(error).__name__}: {error}")

    mode = " (dry run: nothing measured)" if args.dry_run else ""
    mode += f" (trainers prebuilt in {args.prebuilt})" if args.prebuilt else ""
    print(f"CUDA trainer step, BERT-base, {args.steps} steps (first {args.warmup} skipped), "
          f"--vram {vram} --arch {arch}, {gpu}, {datetime.date.today()}{mode}")
    if no_torch:
        print(f"PyTorch comparison not run: {no_torch}")
    elif about:
        print(f"PyTorch: {about}")
    print_table(["seq", "run", "attention", "batch", "precision", "recompute", "est. step s",
                 "median step s", "samples/s", "vs PyTorch", "peak GiB", "plan GiB",
                 "peak <= plan"], table_rows(runs, measured, torch_rows))
    for error in torch_errors:
        print(error)
    sys.exit(1 if torch_errors else 0)


def table_rows(runs, measured, torch_rows):
    """The table's rows: each bertc run, then PyTorch's after the last one of its seq_len."""
    rows = []
    for index, (seq, forced, trainer, plan) in enumerate(runs):
        batch = plan["micro_batch"] * plan["accumulation_steps"]
        recompute = (f"{plan['recompute_flops'] / plan['step_flops']:.3f}"
                     if "recompute_flops" in plan and plan.get("step_flops") else "-")
        estimate = plan.get("estimated_step_seconds")
        step_s, peak = measured.get(trainer, (None, None))
        torch_s, torch_peak, torch_plan = torch_rows.get(seq, (None, None, None))
        ratio = f"{torch_s / step_s:.2f}x" if step_s and torch_s else "-"
        rows.append([seq, "bertc, forced" if forced else "bertc", attention_name(plan),
                     f"{plan['micro_batch']} x {plan['accumulation_steps']}", plan["precision"],
                     recompute, f"{estimate:.4f}" if estimate else "-",
                     f"{step_s:.4f}" if step_s else "-",
                     f"{batch / step_s:,.1f}" if step_s else "-", ratio,
                     gib(peak) if peak else "-", gib(plan["peak_bytes"]),
                     ("yes" if peak <= plan["peak_bytes"] else "NO") if peak else "-"])
        last_of_seq = index + 1 == len(runs) or runs[index + 1][0] != seq
        if torch_s and last_of_seq:
            torch_batch = torch_plan["micro_batch"] * torch_plan["accumulation_steps"]
            rows.append([seq, "PyTorch AMP", "-",
                         f"{torch_plan['micro_batch']} x {torch_plan['accumulation_steps']}",
                         torch_precision(torch_plan), "-", "-", f"{torch_s:.4f}",
                         f"{torch_batch / torch_s:,.1f}", "-", gib(torch_peak), "-", "-"])
    return rows


if __name__ == "__main__":
    main()
