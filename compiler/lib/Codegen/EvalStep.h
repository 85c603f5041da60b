//===- EvalStep.h - the forward-only step evaluation runs --------*- C++ -*-===//
//
// Evaluation runs @micro_step's forward with dropout off. It is derived from the planned
// step rather than planned again: it runs a subset of the step's ops, in the same order,
// at the same arena offsets, so it never needs more arena than training does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace bertc {

/// A detached function (outside the module) that clones, in program order, the ops of the
/// planned `microStep` that its returned loss depends on, with their arena offsets and every
/// dropout rate (dropout ops and attention probabilities) set to 0. It returns the loss and
/// the logits, the loss op's first operand. Why the offsets stay valid: two tensors share
/// bytes only when their live intervals in the step are disjoint; a subset of the ops in
/// the same order only shortens intervals, so they stay disjoint.
/// Fails with a diagnostic when the step does not return the result of a loss op.
mlir::FailureOr<mlir::OwningOpRef<mlir::func::FuncOp>> buildEvalStep(mlir::func::FuncOp microStep);

} // namespace bertc
