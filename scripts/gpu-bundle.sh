#!/usr/bin/env bash
# Prepares gpu-bundle/: everything scripts/gpu-check.sh needs on a GPU machine that has CUDA,
# CMake and Python but not bertc's toolchain (LLVM/MLIR 19, GoogleTest, toml++, nlohmann-json,
# OpenBLAS), so that nothing is built there. Run it here; then run gpu-check.sh there with
# gpu-bundle/ beside it (for the device tool: carry ["gpu-bundle"]).
#   1. builds bertc, the CUDA kernel tests and the attention timer (bertc_attention_time, which
#      bench/attention_vs_sdpa.py runs) (Release, Ninja, ccache) into build-bundle/ (or
#      $BERTC_GPU_BUNDLE_BUILD_DIR) for the CUDA architectures in $BERTC_GPU_ARCHS (default
#      "90", the H100/H200; "80;90" builds the kernels and the trainers for each), and the
#      kernel tests again with their CUDA code as sm_75 PTX alone (into build-bundle-sm75-ptx/);
#   2. stages both kernel test binaries, the attention timer and the libraries they load that
#      such a machine lacks (OpenBLAS and its Fortran runtime; glibc, libstdc++ and CUDA's
#      libraries are there);
#      per architecture the tiny example's CUDA trainers (fp32, bf16, fp16, and fp32 with
#      gradient clipping: "clip", a copy of examples/tiny/model.toml with max_grad_norm = 0.05)
#      and BERT-base's at seq 128 and 512, each with its plan's attention and with the other
#      one (bench/cuda_step.py --prepare --both-attentions), Llama-3.2-1B's at batch 4 x seq
#      2048, --vram 64GB, bf16 from sm_80 (bench/causal_lm_step.py --prepare, with its job.toml
#      and config.json: gpu-check.sh makes the init and the rows there), and BERT-base's
#      at batch 32, seq 128 and 512, built with --time-ops (bench/op_times.py --prepare), each
#      with its plan.json; the tiny example's data and the CPU trainers' metrics logs of the 20 steps
#      gpu-check.sh compares (tiny/cpu-VARIANT.jsonl: losses; fp16's also loss_scale and
#      skipped_steps, clip's grad_norm);
#   3. strips the binaries and packs them into gpu-bundle/bundle.tar.xz beside a MANIFEST
#      (commit, a hash of the sources, architectures, contents), and prints the size.
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."

started=$(date +%s)
build_dir=${BERTC_GPU_BUNDLE_BUILD_DIR:-build-bundle}
archs=${BERTC_GPU_ARCHS:-90}
out=gpu-bundle
stage="$build_dir/gpu-bundle-stage"  # what goes into the archive
work="$build_dir/gpu-bundle-work"    # everything else bertc writes
bertc="$build_dir/bin/bertc"
# The device tool carries at most 64 MiB, the repository's tracked files (~3 MiB) included.
limit_mib=40

# quietly LOG COMMAND...: runs it with its output in LOG; on failure shows LOG's end and exits.
quietly() {
  local log=$1
  shift
  "$@" >>"$log" 2>&1 || { tail -30 "$log"; echo "gpu-bundle: failed: $*, see $log" >&2; exit 1; }
}

# take FROM TO: a trainer and its plan (bertc's other output stays behind).
take() { mkdir -p "$2" && cp "$1/trainer" "$1/plan.json" "$2/"; }

trainer_archs=()
for number in ${archs//;/ }; do
  case $number in
    75 | 80 | 86 | 89 | 90) trainer_archs+=("sm_$number") ;;
    *) echo "gpu-bundle: BERTC_GPU_ARCHS: $number is none of bertc's 75 80 86 89 90" >&2; exit 1 ;;
  esac
done

mkdir -p "$build_dir"
log="$build_dir/gpu-bundle.log"
: >"$log"
echo "gpu-bundle: building bertc, the CUDA kernel tests and the attention timer in $build_dir for CUDA $archs" \
  "(log: $log; minutes on a cold ccache)"
launchers=()
if command -v ccache >/dev/null; then
  launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
quietly "$log" cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launchers[@]}" \
  -DCMAKE_CUDA_ARCHITECTURES="$archs"
quietly "$log" cmake --build "$build_dir" --target bertc bertc_cuda_kernel_tests \
  bertc_attention_time
# The kernel tests again, their CUDA code as sm_75 PTX alone: a newer GPU's driver compiles
# that PTX for it, so they run there the code a T4 runs (gpu-check.sh's step 2b).
ptx_build_dir="$build_dir-sm75-ptx"
quietly "$log" cmake -S . -B "$ptx_build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "${launchers[@]}" -DCMAKE_CUDA_ARCHITECTURES=75-virtual
quietly "$log" cmake --build "$ptx_build_dir" --target bertc_cuda_kernel_tests
echo "gpu-bundle: built at $(($(date +%s) - started)) s"

rm -rf "$stage" "$work"
mkdir -p "$stage/bin" "$stage/lib" "$stage/tiny" "$work"
cp "$build_dir/bin/bertc_cuda_kernel_tests" "$build_dir/bin/bertc_attention_time" "$stage/bin/"
cp "$ptx_build_dir/bin/bertc_cuda_kernel_tests" "$stage/bin/bertc_cuda_kernel_tests_sm75_ptx"

# The tiny example: gpu-check.sh trains the CUDA trainers on this data from seed 1 and compares
# their metrics logs with these CPU logs. The variants are gpu-check.sh's: fp32, bf16, fp16
# (loss scaling), clip: fp32 with max_grad_norm = 0.05, which clips most steps (the tiny
# example's gradient norm runs 0.03 to 0.4), as test/e2e/grad-clipping.test makes it, and
# 8bit: fp32 with --optimizer-state 8bit, tf32: fp32, the CUDA trainers with --tf32
# (for the archs from sm_80), offload: bf16, the CUDA trainers with the optimizer in host
# memory (--offload-optimizer on; the gradients stream down during the backward), and
# checkpoints: bf16, the CUDA trainers with the checkpoints in host memory
# (--offload-checkpoints on; copied down and back up inside the step's graph).
data="$stage/tiny/train.jsonl"
quietly "$log" python3 examples/tiny/make_data.py --rows 2048 --seed 1 --out "$data"
clip_model="$work/clip.toml"
sed 's/^warmup = 0.1$/warmup = 0.1\nmax_grad_norm = 0.05/' examples/tiny/model.toml >"$clip_model"
if ! grep -q '^max_grad_norm = 0.05$' "$clip_model"; then
  echo "gpu-bundle: no 'warmup = 0.1' line in examples/tiny/model.toml to add max_grad_norm after" >&2
  exit 1
fi
tiny_variants=(fp32 bf16 fp16 clip 8bit tf32 offload checkpoints)
for variant in "${tiny_variants[@]}"; do
  model=examples/tiny/model.toml precision=$variant state=fp32 cuda_flags=()
  [[ $variant == clip ]] && model=$clip_model precision=fp32
  [[ $variant == 8bit ]] && precision=fp32 state=8bit
  [[ $variant == tf32 ]] && precision=fp32 cuda_flags=(--tf32)
  [[ $variant == offload ]] && precision=bf16 cuda_flags=(--offload-optimizer on --host-ram 1GB)
  [[ $variant == checkpoints ]] && precision=bf16 cuda_flags=(--offload-checkpoints on --host-ram 1GB)
  quietly "$log" "$bertc" "$model" --vram 1GB --precision "$precision" --optimizer-state "$state" \
    --target cpu -o "$work/cpu-$variant"
  quietly "$log" "$work/cpu-$variant/trainer" --data "$data" --steps 20 --seed 1 --quiet \
    --log "$stage/tiny/cpu-$variant.jsonl"
  for arch in "${trainer_archs[@]}"; do
    [[ $variant == tf32 && ${arch#sm_} -lt 80 ]] && continue
    quietly "$log" "$bertc" "$model" --vram 1GB --precision "$precision" \
      --optimizer-state "$state" --target cuda --arch "$arch" "${cuda_flags[@]}" \
      -o "$work/$arch/tiny-$variant"
    take "$work/$arch/tiny-$variant" "$stage/$arch/tiny-$variant"
  done
done
for arch in "${trainer_archs[@]}"; do
  quietly "$log" env BERTC="$bertc" python3 bench/cuda_step.py --prepare "$work/$arch/bert-base" \
    --arch "$arch" --both-attentions
  mkdir -p "$stage/$arch/bert-base"
  cp "$work/$arch/bert-base/manifest.json" "$stage/$arch/bert-base/"
  for seq_dir in "$work/$arch/bert-base"/seq*/; do
    take "$seq_dir" "$stage/$arch/bert-base/$(basename "$seq_dir")"
  done
  quietly "$log" env BERTC="$bertc" python3 bench/causal_lm_step.py --prepare \
    "$work/$arch/llama-3.2-1b" --arch "$arch"
  take "$work/$arch/llama-3.2-1b" "$stage/$arch/llama-3.2-1b"
  cp "$work/$arch/llama-3.2-1b"/{manifest.json,job.toml,config.json} "$stage/$arch/llama-3.2-1b/"
  for seq in 128 512; do
    quietly "$log" env BERTC="$bertc" python3 bench/op_times.py --prepare \
      "$work/$arch/op-times/seq$seq" --model bert-base --target cuda --arch "$arch" \
      --seq "$seq" --batch 32
    take "$work/$arch/op-times/seq$seq" "$stage/$arch/op-times/seq$seq"
    cp "$work/$arch/op-times/seq$seq/manifest.json" "$stage/$arch/op-times/seq$seq/"
  done
done
echo "gpu-bundle: trainers built at $(($(date +%s) - started)) s"

# The shared libraries the binaries load, less those the GPU machine has: glibc's, the GCC
# runtime, and CUDA's (gpu-check.sh finds cudart and cuBLASLt there).
binaries=("$stage/bin/bertc_cuda_kernel_tests" "$stage/bin/bertc_cuda_kernel_tests_sm75_ptx"
  "$stage/bin/bertc_attention_time"
  "$stage"/sm_*/*/trainer "$stage"/sm_*/*/*/trainer)
loads=$(ldd "${binaries[@]}")
if grep 'not found' <<<"$loads" >&2; then
  exit 1
fi
awk '$2 == "=>" { print $1, $3 }' <<<"$loads" | sort -u |
  { grep -Ev '^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcudart|libcublasLt)\.so' || true; } |
  while read -r name path; do cp -L "$path" "$stage/lib/$name"; done
strip --strip-unneeded "${binaries[@]}" "$stage"/lib/*

rm -rf "$out"
mkdir -p "$out"
XZ_OPT=-T0 tar --sort=name --owner=0 --group=0 -C "$stage" -cJf "$out/bundle.tar.xz" .
nvcc=$(sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\(.*\)")/\1/p' \
  "$build_dir"/CMakeFiles/*/CMakeCUDACompiler.cmake | head -1)
{
  echo "bertc GPU bundle, made by scripts/gpu-bundle.sh for scripts/gpu-check.sh"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "sources: $(bash scripts/sources-fingerprint.sh)"
  echo "cuda-architectures: $archs"
  echo "trainers: ${trainer_archs[*]}"
  echo "tiny: ${tiny_variants[*]}"
  echo "nvcc: ${nvcc:-unknown}"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "contents of bundle.tar.xz (bytes, path):"
  (cd "$stage" && find . -type f -printf '  %s\t%P\n' | LC_ALL=C sort -k2)
} >"$out/MANIFEST"

size=$(du -sb "$out" | cut -f1)
echo "gpu-bundle: $out/ is $((size / 1024)) KiB ($(($(du -sb "$stage" | cut -f1) / 1024)) KiB" \
  "unpacked), made in $(($(date +%s) - started)) s"
if ((size > limit_mib * 1024 * 1024)); then
  echo "gpu-bundle: over $limit_mib MiB: too little of the device tool's 64 MiB carry is left" >&2
  exit 1
fi
