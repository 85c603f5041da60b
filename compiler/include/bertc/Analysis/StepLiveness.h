//===- StepLiveness.h - which tensors of a step are live when ---*- C++ -*-===//
//
// The planner's view of @micro_step: the ops in program order, and for every tensor
// that lives in the activation space (op results other than parameters and inputs)
// the positions where it is made and last read, and its bytes at the upper bounds.
// In-place ops let a result take over a dying operand's bytes: such chains form one
// buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Analysis/ArenaPacker.h"
#include "bertc/Analysis/TrainModule.h"

#include "mlir/IR/Block.h"

namespace bertc {

/// Whether `value` lives in the planned activation space: not a parameter, an input or the
/// host copy of an offloaded tensor (bert.offload).
bool isPlannedActivation(mlir::Value value);

/// One tensor of the activation space and its live interval (positions in the block).
struct TensorLife {
  mlir::Value value;
  LiveInterval interval;
};

/// The activations of `body` in program order of their definitions. The value the
/// block returns stays live to the last position.
std::vector<TensorLife> activationLifetimes(mlir::Block &body, DimBounds bounds);

/// Tensors that share one buffer: an in-place chain. `interval` spans them all.
struct StepBuffer {
  llvm::SmallVector<mlir::Value, 2> values;
  LiveInterval interval;
};

/// Groups `lives` into buffers: a result of an InPlaceOpInterface op joins the buffer
/// of a reusable operand that is last read by that op and has the same byte size.
std::vector<StepBuffer> coalesceInPlace(const std::vector<TensorLife> &lives);

/// The live intervals of `buffers`, in the same order.
std::vector<LiveInterval> intervalsOf(const std::vector<StepBuffer> &buffers);

} // namespace bertc
