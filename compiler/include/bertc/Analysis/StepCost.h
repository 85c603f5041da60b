//===- StepCost.h - how long a training step should take --------*- C++ -*-===//
//
// FLOPs of one optimizer step, summed from each op's CostOpInterface, and a roofline
// estimate of its time on a device model. plan.json's step_flops and
// estimated_step_seconds come from here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinOps.h"

namespace bertc {

/// A machine's speed for a roofline estimate: each op takes the longer of its FLOPs at
/// `flopsPerSecond` and its bytes at `bytesPerSecond`.
struct DeviceModel {
  const char *name;
  double flopsPerSecond;
  double bytesPerSecond;
};

/// The CPU target's nominal machine (two cores with AVX2 and OpenBLAS).
const DeviceModel &cpuDeviceModel();

/// FLOPs and roofline seconds of one optimizer step: `accumulation` micro-steps at the
/// bounds, then the optimizer.
struct StepCost {
  double flops = 0;
  double seconds = 0;
};
StepCost estimateStepCost(mlir::ModuleOp module, const DeviceModel &device);

} // namespace bertc
