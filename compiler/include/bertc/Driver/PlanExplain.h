//===- PlanExplain.h - the plan told tensor by tensor ------------*- C++ -*-===//
//
// The people-facing views of a plan beyond the summary: `--explain` (the peak and the
// largest tensors live there, each with its TOML line, and the ops that take longest in
// the estimated step) and the data behind
// OUTDIR/memory.html (every arena slot over the schedule).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Driver/MemoryHtml.h"
#include "bertc/Driver/PlanReport.h"

namespace bertc {

/// What --explain prints: where the peak is and the `count` largest tensors live there,
/// then the `count` ops that take longest in the estimated step.
void printExplanation(const StepMemory &memory, const PlanSummary &plan, unsigned count,
                      llvm::raw_ostream &os);

/// Every slot of the planned `module` for the memory page: parameters, gradients and
/// moments over the whole step, scratch and inputs, then each activation-space tensor.
MemoryPicture buildMemoryPicture(mlir::ModuleOp module, const StepMemory &memory,
                                 const PlanSummary &plan, llvm::StringRef title);

} // namespace bertc
