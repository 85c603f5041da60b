# gpu-check.sh's step 2: the CUDA kernel tests, and from a bundle the sm_75 PTX ones.
# Sourced by scripts/gpu-check.sh, whose variables and helpers it uses.

# gtest_counts LOG: sets the caller's total, failed_tests and skipped from a GoogleTest
# binary's closing lines in LOG (empty where the binary printed none).
gtest_counts() {
  total=$(sed -nE 's/^\[==========\] ([0-9]+) tests? from .* ran\..*/\1/p' "$1")
  failed_tests=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?, listed below:/\1/p' "$1")
  skipped=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?, listed below:/\1/p' "$1")
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
    gtest_counts "$log"
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
  elif [[ -z $gpu_capability ]]; then
    record "$name" "NOT RUN" "no GPU"
    return 0
  elif ((gpu_capability <= 75)); then
    record "$name" "NOT RUN" "compute capability $((gpu_capability / 10)).$((gpu_capability % 10)) \
is no newer than sm_75"
    return 0
  fi
  CUDA_CACHE_PATH="$build_dir/cuda-jit-cache" timeout "$(step_limit 60)" "$program" \
    --gtest_filter='*ttention*:-AttentionKernelChoice.TensorCoresForSixteenBitsUpToHeadDimension64' \
    >"$log" 2>&1
  status=$?
  grep -E '^\[  FAILED  \]' "$log" | tail -15
  gtest_counts "$log"
  if [[ $status -ne 0 ]]; then
    record "$name" FAILED "$(outcome $status): ${failed_tests:-?} of ${total:-?} failed, see $log"
    return 1
  elif ((${total:-0} == 0)); then
    record "$name" FAILED "no test matched the filter, see $log"
    return 1
  elif [[ -n $skipped ]]; then
    record "$name" partial "$skipped of ${total:-?} skipped (no CUDA device?), see $log"
    return 0
  fi
  record "$name" ok "${total:-?} attention tests passed ($(($(date +%s) - step_start)) s)"
}
