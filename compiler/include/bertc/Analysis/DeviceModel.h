//===- DeviceModel.h - the speeds a step estimate assumes --------*- C++ -*-===//
//
// One machine per --arch (and the CPU): whose kernels it runs, the rate of each compute
// unit an op's kernels use (bert/KernelWork.h), its memory bandwidth, what a kernel
// launch costs and the device memory a trainer process holds beside its plan. The figures and their
// sources are in DeviceModel.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bert/KernelWork.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace bertc {

/// Attainable speeds of a machine, for a roofline estimate (bertc/Analysis/StepCost.h).
struct DeviceModel {
  const char *name;
  /// Whose kernels run there: the CUDA trainer's on a GPU, the CPU trainer's on the CPU.
  mlir::bert::CostTarget target;
  double fp32GemmFlopsPerSecond; ///< GEMM library, fp32 operands
  double halfGemmFlopsPerSecond; ///< GEMM library, bf16/fp16 operands, fp32 accumulation
  double coreFlopsPerSecond;     ///< bertc's own kernels (fp32 on CUDA cores, CPU loops)
  double bytesPerSecond;
  double secondsPerLaunch;
  /// The arch's 16-bit precision: "bf16" from sm_80 on, "fp16" below, "" for a CPU.
  const char *halfPrecision;
  /// GEMM library, fp32 operands as TF32 on tensor cores (`--tf32`); 0 where there are
  /// none (before sm_80, the CPU).
  double tf32GemmFlopsPerSecond = 0;
  /// Host to device and back over PCIe (pinned host memory), for an offloaded optimizer;
  /// 0 for the CPU, which has nothing to copy.
  double pcieBytesPerSecond = 0;
  /// bertc's own warp matrix products on tensor cores (the CPU never runs them).
  double ownMatrixFlopsPerSecond = 0;
  /// Device memory a trainer process holds outside its arena (the CUDA context, cuBLASLt's
  /// handle, the stream and graphs): what --reserve defaults to; 0 for the CPU.
  int64_t processReserveBytes = 0;

  bool hasTf32() const { return tf32GemmFlopsPerSecond > 0; }
  /// Whether its GEMM library runs bf16 operands (a GPU from sm_80).
  bool hasBf16Gemms() const { return llvm::StringRef(halfPrecision) == "bf16"; }

  /// The rate of `unit` in flops per second.
  double flopsPerSecond(mlir::bert::ComputeUnit unit) const;
};

/// The CPU target's machine (two cores with OpenBLAS).
const DeviceModel &cpuDeviceModel();

/// The model of a GPU generation by its `--arch` (sm_75, sm_80, sm_86, sm_89, sm_90), or
/// null for an arch bertc does not know.
const DeviceModel *gpuDeviceModel(llvm::StringRef arch);

/// gpuDeviceModel(arch), or the CPU's for an empty or unknown arch.
const DeviceModel &deviceModel(llvm::StringRef arch);

/// The archs gpuDeviceModel knows, for messages.
llvm::StringRef knownArchs();

} // namespace bertc
