#!/usr/bin/env bash
# The checks that need a GPU, in one command (under 8 minutes on a 16-core machine with a GPU):
#   1. configure and build bertc and the CUDA kernel tests (Release, into build-gpu/, or
#      $BERTC_GPU_CHECK_BUILD_DIR), with the CUDA code for this machine's GPU only
#      (CMAKE_CUDA_ARCHITECTURES=native: one architecture instead of five, to fit the time
#      limit; the normal test suite covers the all-architectures build), or bertc's default
#      list when configuring with native fails. Where gpu-bundle/ is present (made by
#      scripts/gpu-bundle.sh on a machine with bertc's toolchain, for a GPU machine without
#      LLVM/MLIR, GoogleTest, ...), nothing is built: it is unpacked into build-gpu/bundle,
#      steps 2 to 4 run what it holds (the kernel test binary, the trainers, the CPU's loss
#      logs), and the summary warns when it was built from other sources than this tree's;
#   2. run the kernel tests (ctest -L gpu; from a bundle, the test binary): every CUDA kernel
#      against its CPU twin;
#   3. the tiny example trained 20 steps on the CPU and the CUDA target from one seed, in fp32
#      and in bf16, loss logs compared step by step, and the CUDA trainer's measured device
#      peak against its plan's peak_bytes;
#   4. bench/cuda_step.py: BERT-base step time, throughput and device peak at seq 128 and 512,
#      against PyTorch where torch and transformers are installed.
# Each step has a time limit (build 230 s, kernel tests 60 s, comparison 60 s, bert-base
# 110 s). It prints what ran and what did not, and exits non-zero only when something that
# ran failed. It reads the GPU's name, memory and compute capability; it never changes or
# resets any GPU setting.
#
# Environment, for trying the script's steps without the build or without a GPU:
#   BERTC_GPU_BUNDLE=DIR           the bundle to use (default gpu-bundle, when it exists);
#   BERTC_GPU_CHECK_BUILD_DIR=DIR  build directory, and where logs go (default build-gpu);
#                                  both relative to the repository root
#   BERTC_GPU_CHECK_SKIP_BUILD=1   skip step 1 and use DIR as it is (it must hold bin/bertc);
#   BERTC_GPU_CHECK_ARCH=sm_XX     bertc's --arch instead of the GPU's; without a GPU, steps 3
#                                  and 4 then run and fail at the first CUDA trainer instead of
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

elapsed() { echo $(($(date +%s) - started)); }
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
  deadline=$((step_start + 230))
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
  within cmake --build "$build_dir" -j "$jobs" --target bertc bertc_cuda_kernel_tests >>"$log" 2>&1
  status=$?
  if [[ $status -ne 0 ]]; then
    tail -30 "$log"
    record "configure + build" FAILED "build $(outcome $status), see $log"
    return 1
  fi
  record "configure + build" ok "$(($(date +%s) - step_start)) s, $jobs jobs, CUDA for $archs"
}

# The sources a bundle's binaries come from, as one hash: gpu-bundle.sh records it in the
# MANIFEST, and this tree's (often a copy without .git) should match it. The exclusions are
# .gitignore's, so that both trees list the same files. Keep the two scripts' copies identical.
sources_fingerprint() {
  find CMakeLists.txt compiler dialect frontends runtime test/unit/cuda examples/tiny bench/models \
    -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path 'examples/*/train.jsonl' -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
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
  if [[ $(manifest_field sources) != "$(sources_fingerprint)" ]]; then
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
    timeout 60 "$prebuilt/bin/bertc_cuda_kernel_tests" >"$log" 2>&1
    status=$?
    grep -E '^\[  FAILED  \]|error while loading' "$log" | tail -15
    total=$(sed -nE 's/^\[==========\] ([0-9]+) tests? from .* ran\..*/\1/p' "$log")
    failed_tests=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?, listed below:/\1/p' "$log")
    skipped=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?, listed below:/\1/p' "$log")
  else
    log="$build_dir/gpu-check-ctest.log"
    timeout 60 ctest --test-dir "$build_dir" -L gpu --no-tests=error --output-on-failure \
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

# train_both PRECISION RTOL: the tiny example, 20 steps on each target from seed 1, CUDA's
# losses against the CPU's, then the CUDA trainer's device peak against plan.json. From a
# bundle, the CUDA trainer and the CPU's loss log come prebuilt; else bertc builds both.
# Uses compare_trainer_targets' $work, $data, $deadline and $log.
train_both() {
  local precision=$1 rtol=$2 dir="$work/$1" target status largest peak flags cuda cpu_log
  local name="tiny $precision cpu/cuda"
  mkdir -p "$dir"
  if [[ -n $bundle ]]; then
    cuda="$prebuilt/$arch/tiny-$precision"
    cpu_log="$prebuilt/tiny/cpu-$precision.jsonl"
  else
    for target in cpu cuda; do
      flags=(--target "$target")
      [[ $target == cuda ]] && flags+=(--arch "$arch")
      within "$bertc" examples/tiny/model.toml --vram 1GB --precision "$precision" "${flags[@]}" \
        -o "$dir/$target" >>"$log" 2>&1
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
  within python3 test/reference/compare_logs.py "$dir/cuda.jsonl" "$cpu_log" \
    --rtol "$rtol" >"$dir/compare.txt" 2>&1
  status=$?
  # The largest of the "rel. diff" column (step, ours, reference, rel. diff rows).
  largest=$(awk 'NF == 4 && $1 ~ /^[0-9]+$/ && $4 + 0 > m { m = $4 + 0 } END { printf "%.3g", m }' \
    "$dir/compare.txt")
  if [[ $status -ne 0 ]]; then
    record "$name" FAILED \
      "losses differ: $(tail -1 "$dir/compare.txt") (largest rel. diff $largest), see $dir/compare.txt"
    return 1
  fi
  peak=$(python3 test/cuda/Inputs/peak_within_plan.py "$dir/cuda.out" "$cuda/plan.json" 2>&1)
  status=$?
  if [[ $status -ne 0 ]]; then
    record "$name" FAILED "losses match (largest rel. diff $largest, rtol $rtol), but $peak"
    return 1
  fi
  record "$name" ok "largest rel. diff $largest (rtol $rtol); $peak"
}

compare_trainer_targets() {
  local deadline work="$build_dir/gpu-check-compare" log data status=0
  deadline=$(($(date +%s) + 60))
  log="$work/build.log"
  data="$work/train.jsonl"
  rm -rf "$work" && mkdir -p "$work"
  if [[ -n $bundle ]]; then
    data="$prebuilt/tiny/train.jsonl"
  elif ! within python3 examples/tiny/make_data.py --rows 2048 --seed 1 \
      --out "$data" >"$log" 2>&1; then
    record "tiny cpu/cuda" FAILED "make_data.py failed, see $log"
    return 1
  fi
  train_both fp32 1e-3 || status=1
  train_both bf16 2e-2 || status=1
  return $status
}

measure_bert_base() {
  local step_start log="$build_dir/gpu-check-bert-base.txt" status over last line
  local trainers=(--arch "$arch")
  [[ -n $bundle ]] && trainers=(--prebuilt "$prebuilt/$arch/bert-base")
  step_start=$(date +%s)
  BERTC="$bertc" PYTHONUNBUFFERED=1 timeout 110 python3 bench/cuda_step.py "${trainers[@]}" \
    >"$log" 2>&1
  status=$?
  cat "$log"
  if [[ $status -ne 0 ]]; then
    last=$(grep -v '^$' "$log" | tail -1)
    record "bert-base throughput" FAILED "$(outcome $status)${last:+: $last}"
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

echo "gpu-check: $(describe_gpu)"
detect_arch
mkdir -p "$build_dir"
not_ready=""  # why steps 2 to 4 cannot run, if they cannot
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
  record "bert-base throughput" "NOT RUN" "$not_ready"
else
  compare_trainer_targets || failed=1
  echo "gpu-check: trainer comparison done at $(elapsed) s"
  measure_bert_base || failed=1
fi

echo
echo "gpu-check summary ($(elapsed) s):"
printf '%s\n' "${summary[@]}"
exit "$failed"
