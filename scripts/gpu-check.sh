#!/usr/bin/env bash
# The checks that need a GPU, in one command (under 9 minutes on a 16-core machine with a GPU):
#   1. configure and build bertc, the CUDA kernel tests and the attention timer (Release,
#      into build-gpu/, or $BERTC_GPU_CHECK_BUILD_DIR), with the CUDA code for this machine's
#      GPU only (CMAKE_CUDA_ARCHITECTURES=native: one architecture instead of five, to fit the
#      time limit; the normal test suite covers the all-architectures build), or bertc's
#      default list when configuring with native fails. Where gpu-bundle/ is present (made by
#      scripts/gpu-bundle.sh on a machine with bertc's toolchain, for a GPU machine without
#      LLVM/MLIR, GoogleTest, ...), nothing is built: it is unpacked into build-gpu/bundle,
#      steps 2 to 6 run what it holds (the kernel test binary, the trainers, the CPU's
#      metrics logs, the attention timer), and the summary warns when it was built from
#      other sources than this tree's;
#   2. run the kernel tests (ctest -L gpu; from a bundle, the test binary): every CUDA kernel
#      against its CPU twin; then, from a bundle on a GPU newer than sm_75, the attention
#      tests of its second test binary, whose CUDA code is sm_75 PTX that the driver compiles
#      for this GPU: what a T4 runs (fp16's products as pairs of m16n8k8 ones), on hardware;
#   3. the tiny example trained 20 steps on the CPU and the CUDA target from one seed, the
#      metrics logs compared step by step, and each CUDA trainer's measured device peak
#      against its plan's peak_bytes, in seven variants:
#        fp32  losses at rtol 1e-3;
#        bf16  losses at rtol 2e-2 (the 8-bit mantissa);
#        fp16  losses at rtol 2e-2, and the last step's loss_scale and skipped_steps exactly
#              (dynamic loss scaling: the unscale kernel, the overflow flag read back);
#        clip  fp32 with max_grad_norm = 0.05 (a copy of examples/tiny/model.toml; it clips
#              most steps), losses and grad_norm at rtol 1e-3;
#        8bit  fp32 with --optimizer-state 8bit (8-bit AdamW moments), losses at rtol 1e-3;
#        tf32  fp32 with --tf32 on the CUDA side only (GEMM inputs rounded to 10 mantissa
#              bits), losses at rtol 2e-3 (fp32's, doubled: on the simulated device TF32
#              moves these losses by under 1e-5); NOT RUN below sm_80;
#        offload  bf16 with --offload-optimizer on on the CUDA side only (AdamW on the host,
#              the gradients streamed down during the backward on a second stream), losses
#              at rtol 2e-2 (bf16's);
#   4. memcheck: where compute-sanitizer is (PATH, beside nvcc, /usr/local/cuda), the tiny fp32
#      CUDA trainer for 2 steps under --tool memcheck, then, in what is left of the step's 90 s,
#      under --tool racecheck; a sanitizer that refuses the device ("Device not supported")
#      is NOT RUN, and one that runs out of time is "timed out", neither a failure;
#   5. bench/cuda_step.py: BERT-base step time, throughput and device peak at seq 128 and 512,
#      against PyTorch where torch and transformers are installed, each seq_len with its
#      plan's attention and with the other one forced (--both-attentions: which of the fused
#      and the chunked kernels makes the faster step);
#   6. bench/attention_vs_sdpa.py: BERT-base's attention (batch 32, hidden 768, 12 heads,
#      dropout 0.1, seq 128 and 512; bf16 from sm_80, fp16 below), bertc's fused and
#      tensor-core kernels forward and forward+backward, against PyTorch's
#      scaled_dot_product_attention where torch (2.0 or newer) sees the GPU;
#   7. bench/op_times.py: BERT-base at batch 32, seq 128 and 512, built with --time-ops: each
#      op's measured seconds a step beside the plan's estimate for this GPU's arch (the
#      estimate the fit driver ranks plans by); the step's total in the summary, each table
#      in the step's log.
# Each step has a time limit (build 230 s, kernel tests 60 s and 60 s, comparison 90 s, memcheck 90 s,
# bert-base 110 s, attention 60 s, op times 60 s), and the run as a whole 530 s: a step gets
# what is left of that when it is less than its own limit, and does not start with under 20 s
# (the op times step, last, is the one a slow run leaves NOT RUN). It prints what ran and what did
# not, and exits non-zero only when something that ran failed. It reads the GPU's name, memory
# and compute capability; it never changes or resets any GPU setting.
#
# Environment, for trying the script's steps without the build or without a GPU:
#   BERTC_GPU_BUNDLE=DIR           the bundle to use (default gpu-bundle, when it exists);
#   BERTC_GPU_CHECK_BUILD_DIR=DIR  build directory, and where logs go (default build-gpu);
#                                  both relative to the repository root
#   BERTC_GPU_CHECK_SKIP_BUILD=1   skip step 1 and use DIR as it is (it must hold bin/bertc);
#   BERTC_GPU_CHECK_ARCH=sm_XX     bertc's --arch instead of the GPU's; without a GPU, steps 3
#                                  to 5 then run and fail at the first CUDA trainer instead of
#                                  being skipped.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

build_dir=${BERTC_GPU_CHECK_BUILD_DIR:-build-gpu}
[[ $build_dir == /* ]] || build_dir="$PWD/$build_dir"
bertc="$build_dir/bin/bertc"
bundle=${BERTC_GPU_BUNDLE:-}
[[ -z $bundle && -e gpu-bundle ]] && bundle=gpu-bundle
prebuilt="$build_dir/bundle"  # the bundle, unpacked
jobs=$(nproc 2>/dev/null || echo 2)
started=$(date +%s)
summary=()
failed=0
arch=""
tiny_data=""  # the tiny example's data, once step 3 has it
total_limit=530  # s, the whole run's: under 9 minutes with the unpacking and the summary

elapsed() { echo $(($(date +%s) - started)); }
# step_limit OWN: a step's time limit: OWN seconds, or what is left of total_limit if less.
step_limit() {
  local left=$((started + total_limit - $(date +%s)))
  echo $((left < $1 ? left : $1))
}
# time_for STEP...: true when at least 20 s of total_limit are left; else records each STEP
# NOT RUN.
time_for() {
  local left=$((started + total_limit - $(date +%s))) step
  ((left >= 20)) && return 0
  for step in "$@"; do
    record "$step" "NOT RUN" "only ${left} s left of the run's ${total_limit} s"
  done
  return 1
}
# record STEP STATUS DETAIL: one line of the final summary.
record() { summary+=("$(printf '  %-24s %-8s %s' "$1" "$2" "$3")"); }
# within COMMAND...: runs it with what is left of the calling step's $deadline (epoch s).
within() {
  local left=$((deadline - $(date +%s)))
  ((left > 0)) || return 124
  timeout "$left" "$@"
}
# outcome STATUS: "timed out" for timeout's 124, else "failed (STATUS)".
outcome() { if [[ $1 -eq 124 ]]; then echo "timed out"; else echo "failed ($1)"; fi; }

describe_gpu() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader \
      2>/dev/null | head -1
  else
    echo "no nvidia-smi (no NVIDIA driver?)"
  fi
}

# Sets arch to bertc's --arch for the first GPU: the newest architecture bertc knows (sm_75,
# sm_80, sm_86, sm_89, sm_90) that the GPU runs; a newer GPU gets sm_90, and says so.
detect_arch() {
  local cap number known best=""
  if [[ -n ${BERTC_GPU_CHECK_ARCH:-} ]]; then
    arch=$BERTC_GPU_CHECK_ARCH
    record "GPU architecture" ok "$arch (BERTC_GPU_CHECK_ARCH)"
    return
  fi
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' ')
  if [[ ! $cap =~ ^([0-9]+)\.([0-9]+)$ ]]; then
    record "GPU architecture" "NOT RUN" "no GPU: nvidia-smi reports no compute capability"
    return
  fi
  number=$((BASH_REMATCH[1] * 10 + BASH_REMATCH[2]))
  for known in 75 80 86 89 90; do
    ((known <= number)) && best=$known
  done
  if [[ -z $best ]]; then
    record "GPU architecture" "NOT RUN" "compute capability $cap is older than bertc's sm_75"
  elif ((number > 90)); then
    arch=sm_$best
    record "GPU architecture" ok "$arch (compute capability $cap is newer than bertc knows)"
  else
    arch=sm_$best
    record "GPU architecture" ok "$arch (compute capability $cap)"
  fi
}

configure_and_build() {
  local step_start deadline log="$build_dir/gpu-check-build.log" archs="native" status
  step_start=$(date +%s)
  deadline=$((step_start + $(step_limit 230)))
  mkdir -p "$build_dir"
  if ! within cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=native >"$log" 2>&1; then
    echo "gpu-check: configuring with CMAKE_CUDA_ARCHITECTURES=native failed; configuring without it"
    # The failed configure may have cached "native": start again from an empty cache.
    rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
    archs="bertc's default list"
    within cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1
    status=$?
    if [[ $status -ne 0 ]]; then
      tail -20 "$log"
      record "configure + build" FAILED "cmake $(outcome $status), see $log"
      return 1
    fi
  fi
  if ! grep -q 'bertc_cuda_kernel_tests' "$build_dir/build.ninja"; then
    record "configure + build" FAILED "no CUDA toolkit found (looked in PATH and /usr/local/cuda)"
    return 1
  fi
  within cmake --build "$build_dir" -j "$jobs" --target bertc bertc_cuda_kernel_tests \
    bertc_attention_time >>"$log" 2>&1
  status=$?
  if [[ $status -ne 0 ]]; then
    tail -30 "$log"
    record "configure + build" FAILED "build $(outcome $status), see $log"
    return 1
  fi
  record "configure + build" ok "$(($(date +%s) - step_start)) s, $jobs jobs, CUDA for $archs"
}

# manifest_field NAME: the value of the bundle MANIFEST's "NAME: value" line.
manifest_field() { sed -n "s/^$1: //p" "$bundle/MANIFEST" | head -1; }

# extract ARCHIVE DIR: tar's -J needs the xz program, which a slim image may lack; Python's
# tarfile reads .xz itself ("data" filter where this Python has it, to keep it quiet).
extract() {
  if command -v xz >/dev/null 2>&1; then
    timeout 60 tar -xJf "$1" -C "$2"
  else
    timeout 60 python3 -c 'import sys, tarfile
tarfile.open(sys.argv[1]).extractall(
    sys.argv[2], **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))' "$1" "$2"
  fi
}

# add_cuda_libraries BINARY: the bundle's binaries look for cudart and cuBLASLt through an
# rpath to the toolkit that built them (/usr/local/cuda/lib on that machine) and ldconfig's
# cache; for each that BINARY still lacks here (ldd: "not found"), this puts the directory that
# holds it on LD_LIBRARY_PATH: from this machine's CUDA toolkit, or from Python's nvidia pip
# packages (PyTorch's CUDA libraries).
add_cuda_libraries() {
  local name found roots=(/usr/local/cuda/) root
  while IFS= read -r root; do
    roots+=("$root/")
  done < <(python3 -c 'import nvidia; print(*nvidia.__path__, sep="\n")' 2>/dev/null)
  for name in $(ldd "$1" 2>/dev/null | awk '/not found/ { print $1 }'); do
    found=$(find "${roots[@]}" -name "$name" -print -quit 2>/dev/null)
    if [[ -n $found ]]; then
      export LD_LIBRARY_PATH="${found%/*}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "gpu-check: $name from ${found%/*}"
    else
      echo "gpu-check: $name not found (looked in ${roots[*]})"
    fi
  done
}

# Step 1 for a bundle: unpacks it and puts its libraries, and CUDA's, on LD_LIBRARY_PATH.
unpack_bundle() {
  local step_start commit archs nvcc status
  step_start=$(date +%s)
  if [[ ! -f $bundle/MANIFEST || ! -f $bundle/bundle.tar.xz ]]; then
    record "build" FAILED "$bundle has no MANIFEST and bundle.tar.xz: rerun scripts/gpu-bundle.sh"
    return 1
  fi
  rm -rf "$prebuilt" && mkdir -p "$prebuilt"
  extract "$bundle/bundle.tar.xz" "$prebuilt"
  status=$?
  if [[ $status -ne 0 ]]; then
    record "build" FAILED "unpacking $bundle/bundle.tar.xz $(outcome $status)"
    return 1
  fi
  export LD_LIBRARY_PATH="$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  add_cuda_libraries "$prebuilt/bin/bertc_cuda_kernel_tests"
  commit=$(manifest_field commit) archs=$(manifest_field cuda-architectures)
  nvcc=$(manifest_field nvcc)
  record "build" ok "prebuilt bundle ${commit:0:12} (CUDA for $archs, nvcc $nvcc), unpacked in \
$(($(date +%s) - step_start)) s"
  # The commit alone would not do: the bundle may come from uncommitted sources, and this
  # tree is often a copy without .git.
  if [[ $(manifest_field sources) != "$(bash scripts/sources-fingerprint.sh)" ]]; then
    record "bundle sources" WARNING "the bundle (commit ${commit:0:12}) was built from other \
sources than this tree's$(git rev-parse --short=12 HEAD 2>/dev/null | sed 's/^/ (HEAD /; s/$/)/'): \
rerun scripts/gpu-bundle.sh"
  fi
}

run_kernel_tests() {
  local step_start log status total failed_tests skipped
  step_start=$(date +%s)
  if [[ -n $bundle ]]; then
    # The GoogleTest binary itself: ctest needs the build directory.
    log="$build_dir/gpu-check-kernel-tests.log"
    timeout "$(step_limit 60)" "$prebuilt/bin/bertc_cuda_kernel_tests" >"$log" 2>&1
    status=$?
    grep -E '^\[  FAILED  \]|error while loading' "$log" | tail -15
    total=$(sed -nE 's/^\[==========\] ([0-9]+) tests? from .* ran\..*/\1/p' "$log")
    failed_tests=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?, listed below:/\1/p' "$log")
    skipped=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?, listed below:/\1/p' "$log")
  else
    log="$build_dir/gpu-check-ctest.log"
    timeout "$(step_limit 60)" ctest --test-dir "$build_dir" -L gpu --no-tests=error --output-on-failure \
      --timeout 50 -j "$jobs" >"$log" 2>&1
    status=$?
    grep -E 'tests passed|tests failed|\*\*\*Failed|\*\*\*Exception' "$log" | tail -15
    total=$(grep -Eo 'out of [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+')
    failed_tests=$(grep -Eo '[0-9]+ tests failed out of' "$log" | tail -1 | grep -Eo '^[0-9]+')
    skipped=$(grep -c '\*\*\*Skipped' "$log")
  fi
  failed_tests=${failed_tests:-0} skipped=${skipped:-0}
  local counts="$((${total:-0} - failed_tests - skipped)) passed, $failed_tests failed, $skipped skipped"
  if [[ $status -ne 0 ]]; then
    [[ -n $total ]] || counts=$(grep -m1 'error while loading' "$log")
    record "CUDA kernel tests" FAILED "$(outcome $status): ${counts:-no summary in its output}, see $log"
    return 1
  fi
  if ((skipped > 0)); then
    record "CUDA kernel tests" partial "$counts of $total (no CUDA device?), see $log"
    return 0
  fi
  record "CUDA kernel tests" ok "${total:-?} passed ($(($(date +%s) - step_start)) s)"
}

# Step 2b: a T4's code on this newer GPU: the bundle's kernel tests whose CUDA code is sm_75
# PTX alone, which the driver compiles for this GPU, run the attention tests through what a
# T4 runs (fp16's products as pairs of m16n8k8 ones, bf16's on CUDA cores). The test that
# expects this GPU's own architecture's choice is left out.
run_sm75_kernel_tests() {
  local step_start log="$build_dir/gpu-check-kernel-tests-sm75.log" status total failed_tests skipped
  local program="$prebuilt/bin/bertc_cuda_kernel_tests_sm75_ptx" name="sm_75 code (PTX JIT)"
  step_start=$(date +%s)
  if [[ -z $bundle || ! -x $program ]]; then
    record "$name" "NOT RUN" "needs a bundle holding it (scripts/gpu-bundle.sh)"
    return 0
  elif [[ -z $arch || ${arch#sm_} -le 75 ]]; then
    record "$name" "NOT RUN" "${arch:-no GPU architecture}: the kernel tests ran its code"
    return 0
  fi
  CUDA_CACHE_PATH="$build_dir/cuda-jit-cache" timeout "$(step_limit 60)" "$program" \
    --gtest_filter='*ttention*:-AttentionKernelChoice.TensorCoresForSixteenBitsUpToHeadDimension64' \
    >"$log" 2>&1
  status=$?
  grep -E '^\[  FAILED  \]' "$log" | tail -15
  total=$(sed -nE 's/^\[==========\] ([0-9]+) tests? from .* ran\..*/\1/p' "$log")
  failed_tests=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?, listed below:/\1/p' "$log")
  skipped=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?, listed below:/\1/p' "$log")
  if [[ $status -ne 0 ]]; then
    record "$name" FAILED "$(outcome $status): ${failed_tests:-?} of ${total:-?} failed, see $log"
    return 1
  elif [[ -n $skipped ]]; then
    record "$name" partial "$skipped of ${total:-?} skipped (no CUDA device?), see $log"
    return 0
  fi
  record "$name" ok "${total:-?} attention tests passed ($(($(date +%s) - step_start)) s)"
}

# run_tiny TRAINER_DIR NAME: the tiny example's trainer in TRAINER_DIR, 20 steps from seed 1,
# its log in $dir/NAME.jsonl and its output in $dir/NAME.out and .err. Uses train_both's locals.
run_tiny() {
  local status
  within "$1/trainer" --data "$data" --steps 20 --seed 1 --log "$dir/$2.jsonl" \
    >"$dir/$2.out" 2>"$dir/$2.err"
  status=$?
  if [[ $status -ne 0 ]]; then
    record "$name" FAILED "$2 trainer $(outcome $status): $(tail -1 "$dir/$2.err")"
    return 1
  fi
}

# compare_field FIELD RTOL [last]: CUDA's per-step FIELD against the CPU's (compare_logs.py),
# every step, or with "last" the last step's only; appends what it found to $found. Uses
# train_both's locals.
compare_field() {
  local field=$1 rtol=$2 ours="$dir/cuda.jsonl" reference=$cpu_log out status largest
  out="$dir/compare-$field.txt"
  if [[ ${3:-} == last ]]; then
    ours="$dir/cuda-last.jsonl" reference="$dir/cpu-last.jsonl"
    tail -n 1 "$dir/cuda.jsonl" >"$ours" && tail -n 1 "$cpu_log" >"$reference"
  fi
  within python3 test/reference/compare_logs.py "$ours" "$reference" --field "$field" \
    --rtol "$rtol" >"$out" 2>&1
  status=$?
  # The largest of the "rel. diff" column (step, ours, reference, rel. diff rows).
  largest=$(awk 'NF == 4 && $1 ~ /^[0-9]+$/ && $4 + 0 > m { m = $4 + 0 } END { printf "%.3g", m }' \
    "$out")
  if [[ $status -ne 0 ]]; then
    [[ $status -eq 124 ]] && echo "timed out" >>"$out"
    record "$name" FAILED "$field differs: $(tail -1 "$out") (largest rel. diff $largest, \
rtol $rtol), see $out"
    return 1
  fi
  if [[ ${3:-} == last ]]; then
    found+="$field $(awk 'NF == 4 && $1 ~ /^[0-9]+$/ { print $2 " at step " $1 }' "$out") as \
on the CPU; "
  else
    found+="$field largest rel. diff $largest (rtol $rtol); "
  fi
}

# train_both VARIANT RTOL [FIELD:RTOL | last:FIELD]...: the tiny example, 20 steps on each
# target from seed 1, CUDA's losses against the CPU's at RTOL, then each further FIELD at its
# RTOL every step, or exactly at the last step, then the CUDA trainer's device peak against
# plan.json. VARIANT is fp32, bf16, fp16 (a precision), clip (fp32 with $clip_model), 8bit
# (fp32 with --optimizer-state 8bit), tf32 (fp32, the CUDA trainer with --tf32) or offload
# (bf16, the CUDA trainer with --offload-optimizer on). From a
# bundle, the CUDA trainer and the CPU's log come prebuilt; else bertc builds both. Uses
# compare_trainer_targets' $work, $data, $deadline, $log and $clip_model.
train_both() {
  local variant=$1 rtol=$2 dir="$work/$1" target status peak flags cuda cpu_log check cuda_flags=()
  local name="tiny $1 cpu/cuda" model=examples/tiny/model.toml precision=$1 found="" state=fp32
  shift 2
  [[ $variant == clip ]] && name="tiny clip fp32 cpu/cuda" model=$clip_model precision=fp32
  [[ $variant == 8bit ]] && name="tiny 8-bit AdamW fp32 cpu/cuda" precision=fp32 state=8bit
  [[ $variant == tf32 ]] && name="tiny fp32 cpu/TF32 cuda" precision=fp32 cuda_flags=(--tf32)
  [[ $variant == offload ]] && name="tiny bf16 cpu/cuda, optimizer on the host" precision=bf16 \
    cuda_flags=(--offload-optimizer on --host-ram 1GB)
  mkdir -p "$dir"
  if [[ -n $bundle ]]; then
    cuda="$prebuilt/$arch/tiny-$variant"
    cpu_log="$prebuilt/tiny/cpu-$variant.jsonl"
    if [[ ! -x $cuda/trainer || ! -f $cpu_log ]]; then
      # Bundles from before the "tiny:" line held fp32 and bf16.
      record "$name" "NOT RUN" "the bundle has no tiny-$variant trainer or cpu-$variant.jsonl \
(it has tiny: $(manifest_field tiny | grep . || echo fp32 bf16)): rerun scripts/gpu-bundle.sh"
      return 0
    fi
  else
    for target in cpu cuda; do
      flags=(--target "$target")
      [[ $target == cuda ]] && flags+=(--arch "$arch" "${cuda_flags[@]}")
      within "$bertc" "$model" --vram 1GB --precision "$precision" --optimizer-state "$state" \
        "${flags[@]}" -o "$dir/$target" >>"$log" 2>&1
      status=$?
      if [[ $status -ne 0 ]]; then
        record "$name" FAILED "bertc --target $target $(outcome $status), see $log"
        return 1
      fi
    done
    run_tiny "$dir/cpu" cpu || return 1
    cuda="$dir/cuda" cpu_log="$dir/cpu.jsonl"
  fi
  run_tiny "$cuda" cuda || return 1
  compare_field loss "$rtol" || return 1
  for check in "$@"; do
    if [[ $check == last:* ]]; then
      compare_field "${check#last:}" 0 last || return 1
    else
      compare_field "${check%:*}" "${check#*:}" || return 1
    fi
  done
  peak=$(python3 test/cuda/Inputs/peak_within_plan.py "$dir/cuda.out" "$cuda/plan.json" 2>&1)
  status=$?
  if [[ $status -ne 0 ]]; then
    record "$name" FAILED "the logs match (${found%; }), but $peak"
    return 1
  fi
  record "$name" ok "${found}$peak"
}

# Step 3. Sets tiny_data, the data the memcheck step trains on.
compare_trainer_targets() {
  local deadline work="$build_dir/gpu-check-compare" log data status=0 clip_model
  deadline=$(($(date +%s) + $(step_limit 90)))
  log="$work/build.log"
  data="$work/train.jsonl"
  clip_model="$work/clip.toml"
  rm -rf "$work" && mkdir -p "$work"
  if [[ -n $bundle ]]; then
    data="$prebuilt/tiny/train.jsonl"
  elif ! within python3 examples/tiny/make_data.py --rows 2048 --seed 1 \
      --out "$data" >"$log" 2>&1; then
    record "tiny cpu/cuda" FAILED "make_data.py failed, see $log"
    return 1
  fi
  tiny_data=$data
  # As test/e2e/grad-clipping.test makes it (and gpu-bundle.sh): the tiny example's gradient
  # norm runs 0.03 to 0.4, so 0.05 clips most steps.
  sed 's/^warmup = 0.1$/warmup = 0.1\nmax_grad_norm = 0.05/' examples/tiny/model.toml >"$clip_model"
  train_both fp32 1e-3 || status=1
  train_both bf16 2e-2 || status=1
  train_both fp16 2e-2 last:loss_scale last:skipped_steps || status=1
  if [[ -z $bundle ]] && ! grep -q '^max_grad_norm = 0.05$' "$clip_model"; then
    record "tiny clip fp32 cpu/cuda" FAILED "no 'warmup = 0.1' line in examples/tiny/model.toml \
to add max_grad_norm after"
    status=1
  else
    train_both clip 1e-3 grad_norm:1e-3 || status=1
  fi
  train_both 8bit 1e-3 || status=1
  if [[ ${arch#sm_} -ge 80 ]]; then
    train_both tf32 2e-3 || status=1
  else
    record "tiny fp32 cpu/TF32 cuda" "NOT RUN" "TF32 needs sm_80 or newer; this GPU is $arch"
  fi
  train_both offload 2e-2 || status=1
  return $status
}

# find_sanitizer: compute-sanitizer's path, from PATH, beside nvcc or in /usr/local/cuda.
find_sanitizer() {
  local candidate nvcc
  command -v compute-sanitizer 2>/dev/null && return 0
  nvcc=$(command -v nvcc 2>/dev/null)
  for candidate in ${nvcc:+"${nvcc%/*}/compute-sanitizer"} /usr/local/cuda/bin/compute-sanitizer \
      /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [[ -x $candidate ]] && { echo "$candidate"; return 0; }
  done
  return 1
}

# sanitize TOOL: the tiny fp32 CUDA trainer for 2 steps under compute-sanitizer --tool TOOL,
# within the step's $deadline; records "TOOL (tiny fp32)", and sets ran=1 when the sanitizer
# ran to its end, else why_not to why it did not. Uses run_sanitizers' locals.
sanitize() {
  local tool=$1 out="$mdir/$1.out" left status errors totals tool_start last
  local name="$1 (tiny fp32)"
  tool_start=$(date +%s)
  left=$((deadline - tool_start))
  ran=0
  if ((left < 10)); then
    why_not="under 10 s left of the step's ${limit} s"
    record "$name" "NOT RUN" "$why_not"
    return 0
  fi
  # -k: a sanitizer that ignores SIGTERM; timeout signals its whole process group, so the
  # trainer under it goes too.
  timeout -k 5 $((left - 5)) "$sanitizer" --tool "$tool" --error-exitcode 1 "$trainer/trainer" \
    --data "$tiny_data" --steps 2 --seed 1 --log "$mdir/$tool.jsonl" >"$out" 2>&1
  status=$?
  # Its own lines start with "========= "; the first of an error's lines name it.
  errors=$(grep '^========= ' "$out" |
    grep -Ev 'COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|Target application returned' |
    sed 's/^=* *//' | grep -v '^$' | head -3 | paste -sd '|' | sed 's/|/ | /g')
  totals=$(grep -E '^=+ (ERROR|RACECHECK) SUMMARY' "$out" | sed 's/^=* *//' | paste -sd ';' |
    sed 's/;/; /g')
  if grep -qi 'device not supported' "$out"; then
    why_not="compute-sanitizer refuses this GPU: \
$(grep -i -m1 'device not supported' "$out" | sed 's/^=* *//')"
    record "$name" "NOT RUN" "$why_not, see $out"
  elif [[ $status -eq 124 || $status -eq 137 ]]; then
    why_not="$tool timed out"
    record "$name" "timed out" "after $(($(date +%s) - tool_start)) s (the step has ${limit} s), see $out"
  elif [[ $status -eq 0 ]]; then
    ran=1
    record "$name" ok "2 steps in $(($(date +%s) - tool_start)) s${totals:+: $totals}"
  elif [[ -n $errors && $totals != *"ERROR SUMMARY: 0 errors"* ]]; then
    ran=1
    record "$name" FAILED "${totals:-errors}: $errors, see $out"
    return 1
  else
    ran=1
    # The trainer's own lines: its first error, else its last line.
    last=$(grep -Ev '^(=+ .*|=*)$' "$out" | { grep -i -m1 'error' || tail -1; })
    record "$name" FAILED "the trainer $(outcome $status) under compute-sanitizer: $last, see $out"
    return 1
  fi
}

# Step 4: memcheck, then racecheck in what is left of the step's time.
run_sanitizers() {
  local sanitizer trainer mdir="$build_dir/gpu-check-memcheck" limit deadline ran=0 status=0
  local why_not=""
  if ! sanitizer=$(find_sanitizer); then
    record "memcheck (tiny fp32)" "NOT RUN" "no compute-sanitizer (looked in PATH, beside nvcc, \
/usr/local/cuda)"
    return 0
  fi
  trainer="$build_dir/gpu-check-compare/fp32/cuda"
  [[ -n $bundle ]] && trainer="$prebuilt/$arch/tiny-fp32"
  if [[ ! -x $trainer/trainer || -z ${tiny_data:-} ]]; then
    record "memcheck (tiny fp32)" "NOT RUN" "no tiny fp32 CUDA trainer (see tiny fp32 cpu/cuda)"
    return 0
  fi
  rm -rf "$mdir" && mkdir -p "$mdir"
  limit=$(step_limit 90)
  deadline=$(($(date +%s) + limit))
  sanitize memcheck || status=1
  if ((ran)); then
    sanitize racecheck || status=1
  else
    record "racecheck (tiny fp32)" "NOT RUN" "$why_not"
  fi
  return $status
}

measure_bert_base() {
  local step_start log="$build_dir/gpu-check-bert-base.txt" status over last line limit
  local trainers=(--arch "$arch" --both-attentions)
  [[ -n $bundle ]] && trainers=(--prebuilt "$prebuilt/$arch/bert-base")
  step_start=$(date +%s)
  limit=$(step_limit 110)
  BERTC="$bertc" PYTHONUNBUFFERED=1 timeout "$limit" python3 bench/cuda_step.py "${trainers[@]}" \
    >"$log" 2>&1
  status=$?
  cat "$log"
  if [[ $status -ne 0 ]]; then
    last=$(grep -v '^$' "$log" | tail -1)
    record "bert-base throughput" FAILED "$(outcome $status) (limit $limit s)${last:+: $last}"
    return 1
  fi
  # The table's last column is "peak <= plan": NO means the device held more than planned.
  over=$(grep -Ec '\| +NO \|$' "$log")
  if ((over > 0)); then
    record "bert-base throughput" FAILED "device peak above the plan in $over row(s); table below"
  else
    record "bert-base throughput" ok "$(($(date +%s) - step_start)) s; table below"
  fi
  # The bench's header, PyTorch lines and table, indented under the summary's line.
  while IFS= read -r line; do
    summary+=("    $line")
  done < <(grep -E '^(\||CUDA trainer|PyTorch)' "$log")
  ((over == 0))
}

# Step 6: bertc's attention kernels against PyTorch's SDPA at BERT-base's shapes, in the
# precision the trainers use (cuBLASLt's bf16 GEMMs need sm_80).
measure_attention() {
  local step_start log="$build_dir/gpu-check-attention.txt" status limit last line
  local program="$build_dir/bin/bertc_attention_time" precision=bf16
  [[ -n $bundle ]] && program="$prebuilt/bin/bertc_attention_time"
  [[ ${arch#sm_} -lt 80 ]] && precision=fp16
  if [[ ! -x $program ]]; then
    record "attention vs SDPA" "NOT RUN" "no $program${bundle:+ (rerun scripts/gpu-bundle.sh)}"
    return 0
  fi
  step_start=$(date +%s)
  limit=$(step_limit 60)
  PYTHONUNBUFFERED=1 timeout "$limit" python3 bench/attention_vs_sdpa.py --program "$program" \
    --batch 32 --seqs 128 512 --precision "$precision" >"$log" 2>&1
  status=$?
  cat "$log"
  if [[ $status -ne 0 ]]; then
    last=$(grep -v '^$' "$log" | tail -1)
    record "attention vs SDPA" FAILED "$(outcome $status) (limit $limit s)${last:+: $last}"
    return 1
  fi
  record "attention vs SDPA" ok "$precision, $(($(date +%s) - step_start)) s; table below"
  # The bench's header, PyTorch line, table and fused product rates, indented under the
  # summary's line.
  while IFS= read -r line; do
    summary+=("    $line")
  done < <(grep -E '^(\||Attention on|Attention products|PyTorch|fused products at)' "$log")
}

# Step 7: BERT-base's measured op times beside the plan's estimate, at seq 128 and 512.
measure_op_times() {
  local deadline seq log status dir step limit args status_all=0
  limit=$(step_limit 60)
  deadline=$(($(date +%s) + limit))
  for seq in 128 512; do
    log="$build_dir/gpu-check-op-times-seq$seq.txt"
    if [[ -n $bundle ]]; then
      dir="$prebuilt/$arch/op-times/seq$seq"
      if [[ ! -f $dir/manifest.json ]]; then
        record "op times seq $seq" "NOT RUN" "the bundle has no $arch/op-times/seq$seq: rerun \
scripts/gpu-bundle.sh"
        continue
      fi
      args=(--prebuilt "$dir")
    else
      args=(--model bert-base --target cuda --arch "$arch" --seq "$seq" --batch 32)
    fi
    BERTC="$bertc" PYTHONUNBUFFERED=1 within python3 bench/op_times.py "${args[@]}" >"$log" 2>&1
    status=$?
    cat "$log"
    if [[ $status -ne 0 ]]; then
      record "op times seq $seq" FAILED "$(outcome $status) (limit $limit s): \
$(grep -v '^$' "$log" | tail -1)"
      status_all=1
      continue
    fi
    # The table's last row: | **step** | | measured | estimated | measured / estimated |
    step=$(awk -F'|' '$2 ~ /\*\*step\*\*/ { gsub(/ /, ""); print $4 " s measured, " $5 \
" s estimated (" $6 "x)" }' "$log")
    record "op times seq $seq" ok "batch 32, a step: ${step:-no step row}; table in $log"
  done
  return $status_all
}

echo "gpu-check: $(describe_gpu)"
detect_arch
mkdir -p "$build_dir"
not_ready=""  # why steps 2 to 5 cannot run, if they cannot
if [[ -n $bundle ]]; then
  unpack_bundle || not_ready="the bundle could not be used"
elif [[ ${BERTC_GPU_CHECK_SKIP_BUILD:-} == 1 && -f $build_dir/CMakeCache.txt ]]; then
  record "configure + build" skipped "BERTC_GPU_CHECK_SKIP_BUILD=1: $build_dir as it is"
elif [[ ${BERTC_GPU_CHECK_SKIP_BUILD:-} == 1 ]]; then
  record "configure + build" FAILED "BERTC_GPU_CHECK_SKIP_BUILD=1, but $build_dir is no build directory"
  not_ready="the build did not succeed"
elif ! configure_and_build; then
  not_ready="the build did not succeed"
fi
[[ -n $not_ready ]] && failed=1
echo "gpu-check: build done at $(elapsed) s"
if [[ -n $not_ready ]]; then
  record "CUDA kernel tests" "NOT RUN" "$not_ready"
else
  run_kernel_tests || failed=1
  if time_for "sm_75 code (PTX JIT)"; then
    run_sm75_kernel_tests || failed=1
  fi
fi
echo "gpu-check: kernel tests done at $(elapsed) s"
if [[ -z $not_ready && -z $bundle && ! -x $bertc ]]; then
  not_ready="no $bertc"
elif [[ -z $not_ready && -z $arch ]]; then
  not_ready="no GPU architecture (see above)"
elif [[ -z $not_ready && -n $bundle && ! -d $prebuilt/$arch ]]; then
  not_ready="the bundle has no trainers for $arch, only for $(manifest_field trainers)"
fi
if [[ -n $not_ready ]]; then
  record "trainer comparison" "NOT RUN" "$not_ready"
  record "memcheck" "NOT RUN" "$not_ready"
  record "bert-base throughput" "NOT RUN" "$not_ready"
  record "attention vs SDPA" "NOT RUN" "$not_ready"
  record "op times" "NOT RUN" "$not_ready"
else
  if time_for "trainer comparison" "memcheck"; then
    compare_trainer_targets || failed=1
    echo "gpu-check: trainer comparison done at $(elapsed) s"
    if time_for "memcheck"; then
      run_sanitizers || failed=1
      echo "gpu-check: memcheck done at $(elapsed) s"
    fi
  fi
  if time_for "bert-base throughput" "attention vs SDPA" "op times"; then
    measure_bert_base || failed=1
    echo "gpu-check: bert-base throughput done at $(elapsed) s"
    if time_for "attention vs SDPA" "op times"; then
      measure_attention || failed=1
      echo "gpu-check: attention vs SDPA done at $(elapsed) s"
      if time_for "op times"; then
        measure_op_times || failed=1
      fi
    fi
  fi
fi

echo
echo "gpu-check summary ($(elapsed) s):"
printf '%s\n' "${summary[@]}"
exit "$failed"
