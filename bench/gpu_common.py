"""What the CUDA trainer benchmarks share (cuda_step.py, causal_lm_step.py): bertc's --arch for
this machine's GPU, the manifest that --prepare writes and --prebuilt reads, a trainer's run
read back as its step time, device peak and losses, and PyTorch's timed training loop.
Python 3 standard library at import; PyTorch is imported only by the functions that run it.
"""
import importlib
import json
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import List, NamedTuple

ARCHS = [75, 80, 86, 89, 90]  # what bertc --arch knows, as compute capabilities x 10
MANIFEST = "manifest.json"  # what --prepare writes into its directory and --prebuilt reads
DEVICE_PEAK = re.compile(r"device peak: (\d+) bytes .* in use on (.+?) \(cudaMemGetInfo")


def detect_arch():
    """bertc's --arch for the first GPU nvidia-smi lists: the newest it knows that the GPU runs."""
    try:
        cap = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout.split()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        sys.exit("bench: no GPU found with nvidia-smi; name the architecture with --arch")
    major, minor = cap.split(".")
    number = int(major) * 10 + int(minor)
    known = [a for a in ARCHS if a <= number]
    if not known:
        sys.exit(f"bench: compute capability {cap} is older than bertc's oldest --arch, sm_75")
    if number > ARCHS[-1]:
        print(f"bench: compute capability {cap} is newer than bertc knows: using sm_{ARCHS[-1]}",
              file=sys.stderr)
    return f"sm_{max(known)}"


def gpu_memory_bytes():
    """The first GPU's memory as nvidia-smi reports it (memory.total), or None without one."""
    try:
        mib = subprocess.run(["nvidia-smi", "--query-gpu=memory.total",
                              "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, check=True).stdout.split()[0]
        return int(mib) * 2**20
    except (OSError, subprocess.CalledProcessError, IndexError, ValueError):
        return None


def add_run_modes(parser, trainers):
    """--dry-run, and --prepare / --prebuilt (one or the other) for `trainers` ("the trainer",
    "the trainers")."""
    parser.add_argument("--dry-run", action="store_true",
                        help="plan, build and write the inputs; print what would run")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--prepare", metavar="DIR", type=Path,
                       help=f"build {trainers} into DIR with a manifest; run nothing")
    where.add_argument("--prebuilt", metavar="DIR", type=Path,
                       help=f"run {trainers} --prepare built into DIR; bertc is not called")


def parse_run_args(parser):
    """The parsed arguments; --steps must exceed --warmup."""
    args = parser.parse_args()
    if args.steps <= args.warmup:
        sys.exit("bench: --steps must be larger than --warmup")
    return args


def write_manifest(directory, manifest):
    """Writes `manifest` (a dict) as DIRECTORY/manifest.json."""
    (Path(directory) / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def read_manifest(directory, arch, vram):
    """DIRECTORY/manifest.json; `arch` and `vram` (None: the manifest's) must be what it was
    built with, else the bench exits saying so."""
    try:
        manifest = json.loads((Path(directory) / MANIFEST).read_text())
    except (OSError, ValueError) as error:
        sys.exit(f"bench: no prebuilt trainers in {directory}: {error}")
    for name, asked in (("arch", arch), ("vram", vram)):
        if asked not in (None, manifest[name]):
            sys.exit(f"bench: --{name} {asked}, but {directory} was built with {manifest[name]}")
    return manifest


def exit_on_sigterm():
    """A time limit's SIGTERM (scripts/gpu-check.sh) exits through the cleanup of the
    temporary directory; the progress lines on stderr keep what was measured by then."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench: terminated"))


class TrainerRun(NamedTuple):
    """What one run of a CUDA trainer measured."""
    step_seconds: float  # median of the log's "seconds", the first `warmup` steps dropped
    peak_bytes: int  # the trainer's "device peak:" line (cudaMemGetInfo, all processes)
    gpu: str  # the device's name, from the same line
    losses: List[float]  # every step's loss, the log's "loss"


def run_trainer(trainer, args, warmup, log):
    """Runs `trainer ARGS --log LOG` and reads back its TrainerRun; exits with the trainer's
    stderr when it fails."""
    command = [str(trainer), *map(str, args), "--log", str(log)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"bench: {trainer} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    peak = DEVICE_PEAK.search(result.stdout)
    if not peak:
        sys.exit(f"bench: {trainer} printed no 'device peak:' line:\n{result.stdout[-2000:]}")
    records = [r for r in map(json.loads, Path(log).read_text().splitlines()) if "loss" in r]
    seconds = [r["seconds"] for r in records][warmup:]
    return TrainerRun(statistics.median(seconds), int(peak.group(1)), peak.group(2),
                      [r["loss"] for r in records])


def torch_missing(*modules):
    """Why a PyTorch comparison cannot run (torch and `modules` must import, and torch see a
    GPU), or None when it can."""
    try:
        import torch
        for module in modules:
            importlib.import_module(module)
    except ImportError as error:
        return f"cannot import {error.name}"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


def torch_precision(plan):
    """The autocast type PyTorch runs a plan's job in: bf16 where bertc chose it, else fp16."""
    return "bf16" if plan["precision"] == "bf16" else "fp16"


def torch_steps(micro_loss, optimizer, steps, accumulation, dtype, device="cuda"):
    """(seconds, losses) of `steps` optimizer steps in PyTorch eager: each step runs
    `accumulation` micro-steps, micro_loss(step, micro) under torch.autocast(dtype) divided
    by `accumulation` and its backward, then the optimizer (through a GradScaler for fp16;
    disabled, for bf16, it passes the loss through and steps the optimizer unchanged), timed
    between two torch.cuda.synchronize(). A step's loss is the sum of its micro-steps'.
    `device` is there so that the loop can be tried on a CPU."""
    import torch

    fp16 = dtype == torch.float16
    # torch.amp.GradScaler from torch 2.3; before, torch.cuda.amp's (a disabled one anywhere).
    scaler = (torch.amp.GradScaler(device, enabled=fp16) if hasattr(torch.amp, "GradScaler")
              else torch.cuda.amp.GradScaler(enabled=fp16))
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    seconds, losses = [], []
    for step in range(steps):
        sync()
        start = time.perf_counter()
        step_loss = 0
        for micro in range(accumulation):
            with torch.autocast(device_type=device, dtype=dtype):
                loss = micro_loss(step, micro) / accumulation
            scaler.scale(loss).backward()
            step_loss = step_loss + loss.detach()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        sync()
        seconds.append(time.perf_counter() - start)
        losses.append(step_loss)
    return seconds, [float(loss) for loss in losses]


def gib(n):
    """Bytes as GiB with two decimals."""
    return f"{n / 2**30:.2f}"
