//===- PlanReport.h - what a plan costs, for machines and people -*- C++ -*-===//
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace bertc {

/// The memory of a planned module by category, plus what the process adds.
struct PlanSummary {
  int64_t budgetBytes = 0;
  int64_t reserveBytes = 0;
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0;
  int64_t parameterBytes = 0;
  int64_t gradientBytes = 0;
  int64_t optimizerStateBytes = 0;
  int64_t activationBytes = 0; ///< inputs and every tensor of the step
  int64_t workspaceBytes = 0;  ///< kernel scratch
  int64_t microBatch = 0;
  int64_t accumulationSteps = 0;
  int64_t seqLen = 0;
  std::string precision;

  /// What --vram must cover: the arena and the reserve.
  int64_t peakBytes() const { return arenaBytes + reserveBytes; }
};

/// Reads the summary of a module after -bertc-plan-buffers.
mlir::FailureOr<PlanSummary> summarizePlan(mlir::ModuleOp module, int64_t budgetBytes,
                                           int64_t reserveBytes);

/// plan.json: the machine-readable truth about the plan.
void writePlanJson(const PlanSummary &plan, llvm::raw_ostream &os);

/// The few lines printed for every compile.
void printPlanSummary(const PlanSummary &plan, llvm::raw_ostream &os);

} // namespace bertc
