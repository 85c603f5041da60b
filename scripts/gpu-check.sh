#!/usr/bin/env bash
# The checks that need a GPU, in one command (under 9 minutes on a 16-core machine with a GPU):
#   1. configure and build bertc, the CUDA kernel tests and the attention timer (Release,
#      into build-gpu/, or $BERTC_GPU_CHECK_BUILD_DIR), with the CUDA code for this machine's
#      GPU only (CMAKE_CUDA_ARCHITECTURES=native: one architecture instead of five, to fit the
#      time limit; the normal test suite covers the all-architectures build), or bertc's
#      default list when configuring with native fails. Where gpu-bundle/ is present (made by
#      scripts/gpu-bundle.sh on a machine with bertc's toolchain, for a GPU machine without
#      LLVM/MLIR, GoogleTest, ...), nothing is built: it is unpacked into build-gpu/bundle,
#      steps 2 to 8 run what it holds (the kernel test binary, the trainers, the CPU's
#      metrics logs, the attention timer), and the summary warns when it was built from
#      other sources than this tree's;
#   2. run the kernel tests (ctest -L gpu; from a bundle, the test binary): every CUDA kernel
#      against its CPU twin; then, from a bundle on a GPU newer than sm_75, the attention
#      tests of its second test binary, whose CUDA code is sm_75 PTX that the driver compiles
#      for this GPU: what a T4 runs (fp16's products as pairs of m16n8k8 ones), on hardware;
#   3. the tiny example trained 20 steps on the CPU and the CUDA target from one seed, the
#      metrics logs compared step by step, and each CUDA trainer's measured device peak
#      against its plan's peak_bytes, in eight variants:
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
#        checkpoints  bf16 with --offload-checkpoints on on the CUDA side only (what the
#              backward reads copied to page-locked host memory and back inside the step's
#              CUDA graph), losses at rtol 2e-2 (bf16's);
#   4. memcheck: where compute-sanitizer is (PATH, beside nvcc, /usr/local/cuda), the tiny fp32
#      CUDA trainer for 2 steps under --tool memcheck, then, in what is left of the step's 90 s,
#      under --tool racecheck; a sanitizer that refuses the device ("Device not supported")
#      is NOT RUN, and one that runs out of time is "timed out", neither a failure;
#   5. bench/cuda_step.py: BERT-base step time, throughput and device peak at seq 128 and 512,
#      against PyTorch where torch and transformers are installed, each seq_len with its
#      plan's attention and with the other one forced (--both-attentions: which of the fused
#      and the chunked kernels makes the faster step);
#   6. bench/causal_lm_step.py: Llama-3.2-1B's shape (config.json alone, random weights
#      written as a BF16 safetensors init) at batch 4 x seq 2048, --vram 64GB, bf16 from sm_80,
#      trained 20 steps by the CUDA trainer, then by PyTorch eager + SDPA (is_causal) where
#      torch (2.0 or newer) sees the GPU, from the same init and rows: step time, tokens/s,
#      first and last loss, and the trainer's device peak against the plan's peak_bytes; NOT
#      RUN where the GPU holds less than the plan's peak;
#   7. bench/attention_vs_sdpa.py: BERT-base's attention (batch 32, hidden 768, 12 heads,
#      dropout 0.1, seq 128 and 512; bf16 from sm_80, fp16 below), bertc's fused and
#      tensor-core kernels forward and forward+backward, against PyTorch's
#      scaled_dot_product_attention where torch (2.0 or newer) sees the GPU;
#   8. bench/op_times.py: BERT-base at batch 32, seq 128 and 512, built with --time-ops: each
#      op's measured seconds a step beside the plan's estimate for this GPU's arch (the
#      estimate the fit driver ranks plans by); the step's total in the summary, each table
#      in the step's log.
# Each step has a time limit (build 230 s, kernel tests 60 s and 60 s, comparison 90 s,
# memcheck 90 s, bert-base 150 s: four trainers and PyTorch twice, Llama 90 s: the init, one
# trainer and PyTorch, attention 60 s, op times 60 s), and the run as a whole 530 s: a step
# gets what is left of that when it is less than its own limit, and does not start with
# under 20 s (the Llama step with under 60 s: cut short, it measures nothing). The limits add
# up to more than 530 s: the steps after BERT-base run in what the ones before leave, the
# Llama step, which no GPU has run, first of them, so that a slow run leaves NOT RUN the
# attention and op times steps, which an H200 has run. It prints what ran and what did not,
# and exits non-zero only when something that ran failed. It reads the GPU's name, memory
# and compute capability; it never changes or resets any GPU setting.
#
# Environment, for trying the script's steps without the build or without a GPU:
#   BERTC_GPU_BUNDLE=DIR           the bundle to use (default gpu-bundle, when it exists);
#   BERTC_GPU_CHECK_BUILD_DIR=DIR  build directory, and where logs go (default build-gpu);
#                                  both relative to the repository root
#   BERTC_GPU_CHECK_SKIP_BUILD=1   skip step 1 and use DIR as it is (it must hold bin/bertc);
#   BERTC_GPU_CHECK_ARCH=sm_XX     bertc's --arch instead of the GPU's; without a GPU, steps 3
#                                  to 8 then run and fail at the first CUDA trainer (or are NOT
#                                  RUN for want of a tool) instead of being skipped.
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
gpu_capability=""  # the GPU's compute capability x 10 (86 for 8.6), once detect_arch found it
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

# The steps, a file each.
for part in setup kernel-tests trainers sanitizers benchmarks; do
  # shellcheck source=/dev/null
  source "scripts/gpu-check/$part.sh" || exit 1
done

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
  record "sm_75 code (PTX JIT)" "NOT RUN" "$not_ready"
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
  record "Llama-3.2-1B vs PyTorch" "NOT RUN" "$not_ready"
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
  if time_for "bert-base throughput" "Llama-3.2-1B vs PyTorch" "attention vs SDPA" "op times"; then
    measure_bert_base || failed=1
    echo "gpu-check: bert-base throughput done at $(elapsed) s"
    if time_for "Llama-3.2-1B vs PyTorch" "attention vs SDPA" "op times"; then
      measure_causal_lm || failed=1
      echo "gpu-check: Llama-3.2-1B vs PyTorch done at $(elapsed) s"
    fi
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
