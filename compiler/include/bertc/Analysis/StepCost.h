//===- StepCost.h - how long a training step should take --------*- C++ -*-===//
//
// A roofline over the kernels each op's CostOpInterface says its target launches: a
// kernel takes the longer of its arithmetic at its unit's rate and its bytes at the
// memory bandwidth, plus a fixed cost per launch (which is what makes a larger
// micro-batch faster). plan.json's step_flops and estimated_step_seconds come from here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Analysis/DeviceModel.h"
#include "bertc/Analysis/OpTime.h"

#include "bert/BertDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <vector>

namespace bertc {

/// Seconds of one kernel on `device`.
double estimateKernelSeconds(const mlir::bert::KernelWork &kernel, const DeviceModel &device);

/// The kernels `target` launches for one run of `op` at the batch and seq bounds (none
/// for an op without a cost).
llvm::SmallVector<mlir::bert::KernelWork, 1>
estimateOpKernels(mlir::Operation *op, int64_t batch, int64_t seq, mlir::bert::CostTarget target);

/// Flops of one run of `op` on `target`.
double estimateOpFlops(mlir::Operation *op, int64_t batch, int64_t seq,
                       mlir::bert::CostTarget target);

/// Roofline seconds of one run of `op` on `device`.
double estimateOpSeconds(mlir::Operation *op, int64_t batch, int64_t seq,
                         const DeviceModel &device);

/// Whether `op`'s kernels spend longer on arithmetic than on memory on `device`.
bool isComputeBound(mlir::Operation *op, int64_t batch, int64_t seq, const DeviceModel &device);

/// Flops and roofline seconds of one optimizer step on `device`: `accumulation`
/// micro-steps at the bounds, then the optimizer. With the optimizer offloaded to the
/// host of a GPU (bert.optimizer_on_host), the optimizer runs the CPU trainer's kernels
/// priced on the CPU's model, after the gradients come down and before each trainable
/// parameter goes back up over PCIe (DeviceModel::pcieBytesPerSecond); where the gradients
/// stream (streamsGradients), the downloads and the host's AdamW overlap the last
/// micro-step's backward (its ops after the loss), and the step pays only for what
/// outlasts it, and for the uploads.
///
/// `byOp` says where `seconds` goes: one entry per op name (every run of every op of that
/// name in the step), one for the gradient region's zeroing and, with the optimizer on the
/// host, one for the part of its work the step waits for. Longest first; the entries'
/// seconds add up to `seconds`.
struct StepCost {
  double flops = 0;
  double seconds = 0;
  /// The offloaded optimizer's work: transfers and the host's AdamW (overlapped with the
  /// backward where the gradients stream, so not all of it is in `seconds`).
  double hostSeconds = 0;
  std::vector<OpTime> byOp;
};
StepCost estimateStepCost(mlir::ModuleOp module, const DeviceModel &device);

} // namespace bertc
