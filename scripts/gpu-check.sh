#!/usr/bin/env bash
# The checks that need a GPU, in one command (under 8 minutes on a machine with a GPU):
#   1. configure and build the CUDA kernel tests (Release, into build-gpu/, or
#      $BERTC_GPU_CHECK_BUILD_DIR);
#   2. run them (ctest -L gpu): every CUDA kernel against its CPU twin;
#   3. the trainer comparison and 4. the bert-base throughput table, which need the CUDA
#      trainer code generator and report themselves as not run until it exists.
# It prints what ran and what did not, and exits non-zero only when something that ran
# failed. It reads the GPU's name and memory; it never changes or resets any GPU setting.
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir=${BERTC_GPU_CHECK_BUILD_DIR:-build-gpu}
jobs=$(nproc 2>/dev/null || echo 2)
started=$(date +%s)
summary=()
failed=0

elapsed() { echo $(($(date +%s) - started)); }
# record STEP STATUS DETAIL: one line of the final summary.
record() { summary+=("$(printf '  %-24s %-8s %s' "$1" "$2" "$3")"); }

describe_gpu() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null |
      head -1
  else
    echo "no nvidia-smi (no NVIDIA driver?)"
  fi
}

configure_and_build() {
  local step_start log="$build_dir/gpu-check-build.log"
  step_start=$(date +%s)
  mkdir -p "$build_dir"
  if ! cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1; then
    tail -20 "$log"
    record "configure + build" FAILED "cmake failed, see $log"
    return 1
  fi
  if ! grep -q 'bertc_cuda_kernel_tests' "$build_dir/build.ninja"; then
    record "configure + build" FAILED "no CUDA toolkit found (looked in PATH and /usr/local/cuda)"
    return 1
  fi
  if ! timeout 330 cmake --build "$build_dir" -j "$jobs" --target bertc_cuda_kernel_tests \
      >>"$log" 2>&1; then
    tail -30 "$log"
    record "configure + build" FAILED "build failed or timed out, see $log"
    return 1
  fi
  record "configure + build" ok "$(($(date +%s) - step_start)) s, $jobs jobs"
}

run_kernel_tests() {
  local step_start log="$build_dir/gpu-check-ctest.log" status
  step_start=$(date +%s)
  timeout 200 ctest --test-dir "$build_dir" -L gpu --output-on-failure --timeout 120 \
    -j "$jobs" >"$log" 2>&1
  status=$?
  grep -E 'tests passed|tests failed|\*\*\*Failed|\*\*\*Exception' "$log" | tail -15
  local total skipped
  total=$(grep -Eo 'out of [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+')
  skipped=$(grep -c '\*\*\*Skipped' "$log")
  if [[ $status -ne 0 ]]; then
    record "CUDA kernel tests" FAILED "see $log ($(($(date +%s) - step_start)) s)"
    return 1
  fi
  if [[ -n "$total" && "$skipped" -gt 0 ]]; then
    record "CUDA kernel tests" partial "$((total - skipped)) of $total ran, $skipped skipped (no CUDA device?)"
    return 0
  fi
  record "CUDA kernel tests" ok "${total:-?} passed ($(($(date +%s) - step_start)) s)"
}

# Plug-in point: the tiny example, 20 steps on the CPU and the CUDA target from the same
# seed, loss logs compared step by step. Needs `bertc --target cuda`.
compare_trainer_targets() {
  record "trainer comparison" "NOT RUN" "needs the CUDA trainer executable (bertc --target cuda builds only trainer.o so far)"
}

# Plug-in point: bert-base at seq_len 128 and 512, per precision: samples/s and the peak
# device memory against the plan's bytes, as a table. Needs `bertc --target cuda`.
measure_bert_base() {
  record "bert-base throughput" "NOT RUN" "needs the CUDA trainer executable (bertc --target cuda builds only trainer.o so far)"
}

echo "gpu-check: $(describe_gpu)"
if configure_and_build; then
  run_kernel_tests || failed=1
else
  failed=1
  record "CUDA kernel tests" "NOT RUN" "the build did not succeed"
fi
compare_trainer_targets
measure_bert_base

echo
echo "gpu-check summary ($(elapsed) s):"
printf '%s\n' "${summary[@]}"
exit "$failed"
