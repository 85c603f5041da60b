//===- TrainerPlanTable.h - the generated TrainerPlan of a trainer -*- C++ -*-===//
//
// What every target's trainer source starts with: the parameter table (kParams) and
// kTrainerPlan (trainer_plan.h), read from the planned module.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace bertc {

/// `const ParamSlot kParams[] = {...};` for the parameters of `microStep`.
void emitParamTable(mlir::func::FuncOp microStep, llvm::raw_ostream &os);

/// Closes the generated anonymous namespace kParams lives in, then writes
/// `const TrainerPlan kTrainerPlan = {...};`.
mlir::LogicalResult emitPlan(mlir::ModuleOp module, mlir::func::FuncOp microStep,
                             llvm::raw_ostream &os);

} // namespace bertc
