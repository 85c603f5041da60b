//===- CpuTrainer.h - C++ source of a CPU trainer ----------------*- C++ -*-===//
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace bertc {

/// Writes the C++ source of a trainer for a planned module (after
/// -bertc-plan-buffers): kTrainerPlan and the two step functions of
/// runtime/include/bertc/runtime/trainer_plan.h, calling the runtime's CPU kernels at
/// the planned arena offsets. Fails with a diagnostic on an op it cannot emit.
mlir::LogicalResult emitCpuTrainer(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace bertc
