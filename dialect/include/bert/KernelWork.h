//===- KernelWork.h - what an op's kernels compute and move ------*- C++ -*-===//
//
// The vocabulary of the CostOpInterface: each op describes the kernel launches a target's
// runtime makes for it, with the arithmetic each one does, the unit it runs on and the
// bytes it moves. A roofline (bertc/Analysis/StepCost.h) turns them into seconds on a
// device. No MLIR here, so device models and their tests can use it alone.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace mlir::bert {

/// Whose kernels carry an op out: the CPU trainer's (OpenBLAS GEMMs and single-threaded
/// loops) or the CUDA trainer's (cuBLASLt GEMMs and bertc's own kernels). Their work
/// differs where the kernels do: CUDA attention computes its products on CUDA cores.
enum class CostTarget { Cpu, Cuda };

/// What a kernel's arithmetic runs on, which sets the rate it can reach.
enum class ComputeUnit {
  /// A GEMM library call with fp32 operands: OpenBLAS sgemm, or cuBLASLt with
  /// CUBLAS_COMPUTE_32F (no TF32), i.e. fp32 multiply-adds on CUDA cores.
  Fp32Gemm,
  /// A cuBLASLt call with fp32 operands and CUBLAS_COMPUTE_32F_FAST_TF32 (an op marked
  /// `tf32`): operands rounded to TF32 on tensor cores, fp32 accumulation (sm_80 on).
  Tf32Gemm,
  /// A GEMM library call with bf16/fp16 operands and fp32 accumulation: tensor cores on a
  /// GPU; on the CPU, sgemm over tiles converted to fp32 first.
  HalfGemm,
  /// bertc's own kernels: fp32 arithmetic (and the dropout generator's integer work) on
  /// CUDA cores, or scalar loops on one CPU core, whatever the storage type.
  Fp32Cores,
  /// bertc's own kernels' warp matrix products (mma.sync): 16-bit operands, fp32 accumulation,
  /// on tensor cores (the CUDA target's fused attention of 16-bit storage).
  HalfOwnMatrix,
};

/// One kernel's work: floating-point operations (a multiply-add counts 2; see each op for
/// what else it counts) and bytes read and written in memory.
struct KernelWork {
  ComputeUnit unit = ComputeUnit::Fp32Cores;
  double flops = 0;
  double bytes = 0;
  /// Launches of its own: 1, or 0 for work that runs inside a launch shared with other
  /// ops (the CUDA target's one AdamW launch over every parameter).
  int launches = 1;
  /// Bytes copied between the device and (pinned) host memory, over the host link: an
  /// offloaded tensor's way down or back up.
  double hostLinkBytes = 0;
};

/// A copy of `bytes` between the device and host memory (an offloaded tensor's way down or
/// back up): over the host link on a GPU; on the CPU, where both lie in host memory, a copy
/// that reads and writes them.
inline KernelWork hostCopyKernel(double bytes, CostTarget target) {
  KernelWork copy;
  if (target == CostTarget::Cpu)
    copy.bytes = 2 * bytes;
  else
    copy.hostLinkBytes = bytes;
  return copy;
}

} // namespace mlir::bert
