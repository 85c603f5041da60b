//===- StepCost.h - how long a training step should take --------*- C++ -*-===//
//
// FLOPs of one optimizer step, summed from each op's CostOpInterface, and a roofline
// estimate of its time on a device model. plan.json's step_flops and
// estimated_step_seconds come from here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

namespace bertc {

/// A machine's speed for a roofline estimate: each op takes the longer of its FLOPs at
/// the rate of its operands' precision and its bytes at `bytesPerSecond`, plus a fixed
/// cost per op (a kernel launch), which is what makes a larger micro-batch faster.
struct DeviceModel {
  const char *name;
  double flopsPerSecond;     ///< fp32
  double halfFlopsPerSecond; ///< bf16/fp16 operands, fp32 accumulation (tensor cores)
  double bytesPerSecond;
  double secondsPerOp;
  /// The arch's 16-bit precision: "bf16" from sm_80 on, "fp16" below, "" for a CPU.
  const char *halfPrecision;
};

/// The CPU target's nominal machine (two cores with AVX2 and OpenBLAS).
const DeviceModel &cpuDeviceModel();

/// The nominal peak of a GPU generation by its `--arch` (sm_75, sm_80, sm_86, sm_89,
/// sm_90), or null for an arch bertc does not know.
const DeviceModel *gpuDeviceModel(llvm::StringRef arch);

/// gpuDeviceModel(arch), or the CPU's for an empty or unknown arch.
const DeviceModel &deviceModel(llvm::StringRef arch);

/// The archs gpuDeviceModel knows, for messages.
llvm::StringRef knownArchs();

/// Roofline seconds of one run of `op` at the batch and seq bounds (0 for an op
/// without a cost).
double estimateOpSeconds(mlir::Operation *op, int64_t batch, int64_t seq,
                         const DeviceModel &device);

/// FLOPs and roofline seconds of one optimizer step: `accumulation` micro-steps at the
/// bounds, then the optimizer.
struct StepCost {
  double flops = 0;
  double seconds = 0;
};
StepCost estimateStepCost(mlir::ModuleOp module, const DeviceModel &device);

} // namespace bertc
