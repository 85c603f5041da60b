//===- TrainerPlanTable.h - the generated TrainerPlan of a trainer -*- C++ -*-===//
//
// What every target's trainer source holds besides its steps, in one anonymous namespace:
// the parameter table (kParams) and the plan (kPlan) read from the planned module, then
// kTrainer and its export bertc_trainer() (bertc/abi/trainer.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/abi/trainer.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace bertc {

/// `const ParamSlot kParams[] = {...};` for the parameters of `microStep`.
void emitParamTable(mlir::func::FuncOp microStep, llvm::raw_ostream &os);

/// Each parameter's index in emitParamTable's kParams, by name.
llvm::StringMap<size_t> paramTableIndices(mlir::func::FuncOp microStep);

/// `const TrainerPlan kPlan = {...};`: the regions of `bert.plan`, the settings of
/// `bert.train` (train_settings.def) and the job's `data` (data_settings.def); `planChecks`
/// says whether the steps were emitted with plan-check calls.
mlir::LogicalResult emitPlan(mlir::ModuleOp module, mlir::func::FuncOp microStep,
                             const JobDataSettings &data, bool planChecks, llvm::raw_ostream &os);

/// `const Trainer kTrainer`, whose steps are the CpuSteps or (`cuda`) CudaSteps named
/// `steps`; closes the anonymous namespace; then the export bertc_trainer().
void emitTrainerEntry(llvm::StringRef steps, bool cuda, llvm::raw_ostream &os);

} // namespace bertc
