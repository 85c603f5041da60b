//===- CpuTrainer.h - C++ source of a CPU trainer ----------------*- C++ -*-===//
#pragma once

#include "bertc/abi/trainer.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace bertc {

/// Writes the C++ source of a trainer for a planned module (after -bertc-plan-buffers
/// and -bertc-derive-eval-step): its plan and CpuSteps, exported by bertc_trainer()
/// (bertc/abi/trainer.h), the steps calling the runtime's CPU kernels at the planned arena
/// offsets. A module with plan checks (-bertc-instrument-plan-checks) gives a trainer whose
/// steps report what each op reads, defines and releases to the plan checker
/// (plan_check.h), which the trainer's --plan-check turns on. Fails with a diagnostic on an
/// op it cannot emit.
mlir::LogicalResult emitCpuTrainer(mlir::ModuleOp module, const JobDataSettings &data,
                                   llvm::raw_ostream &os);

} // namespace bertc
