//===- RematChain.h - @micro_step as the remat solver's chain ----*- C++ -*-===//
//
// Reads a training step (after autodiff) as the chain of blocks RematSolver works on:
// the forward split where a single tensor carries everything onward, each block's
// tensors with their bytes at the bounds and their roofline recompute cost, and each
// block's backward ops with the gradient bytes live around them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Analysis/RematSolver.h"
#include "bertc/Analysis/StepCost.h"
#include "bertc/Analysis/TrainModule.h"

#include "llvm/ADT/DenseSet.h"

namespace bertc {

/// The solver's chain of a step and the IR it stands for.
struct RematChain {
  remat::Chain chain;
  /// Per block, per node: the forward value the node is.
  std::vector<std::vector<mlir::Value>> values;
  /// The ops of the forward pass (everything the returned loss depends on).
  llvm::DenseSet<mlir::Operation *> forwardOps;
};

/// The forward ops of `body`: everything the returned loss depends on.
llvm::DenseSet<mlir::Operation *> forwardOpsOf(mlir::Block &body);

/// Builds the chain of `body` (a @micro_step with its backward), costing each op at
/// `device`. Failure, without a diagnostic, when the step does not read as a chain
/// (a backward op reading forward tensors of two non-adjacent blocks).
mlir::FailureOr<RematChain> buildRematChain(mlir::Block &body, DimBounds bounds,
                                            const DeviceModel &device);

} // namespace bertc
