//===- TrainerEmitter.h - a trainer's source for any target ------*- C++ -*-===//
//
// Every target's trainer source (bertc/abi/trainer.h) has one shape; a TrainerTarget
// fills in what differs: which kernels the steps call and with what arguments, the
// tables the steps need and the steps table the runtime reads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "EmitContext.h"
#include "bertc/abi/trainer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace bertc {

/// What a target contributes to its trainer source.
class TrainerTarget {
public:
  virtual ~TrainerTarget() = default;

  /// Whose kernels the steps call (EmitContext::call and end).
  virtual KernelTarget kernels() const = 0;
  /// The op-emitter families of the steps, tried in order (emitOp).
  virtual llvm::ArrayRef<OpEmitter> opEmitters() const = 0;
  /// What every step function takes before its own arguments: "const StepContext &ctx",
  /// then whatever the target's kernels need.
  virtual llvm::StringRef stepParameters() const = 0;

  /// The file's opening: a comment, the includes and declarations, before the anonymous
  /// namespace of the tables and steps; fails with a diagnostic when `module` was not
  /// planned for the target. `planChecks`: the module's steps hold plan checks.
  virtual mlir::LogicalResult emitPreamble(mlir::ModuleOp module, bool planChecks,
                                           llvm::raw_ostream &os) = 0;
  /// Tables the steps read, written after kPlan; none by default.
  virtual mlir::LogicalResult emitTables(mlir::ModuleOp module, llvm::raw_ostream &os);
  /// optimizerStep; by default emitted op by op, as the other steps are.
  virtual mlir::LogicalResult emitOptimizerStep(mlir::func::FuncOp optimizerStep,
                                                llvm::raw_ostream &os);
  /// After each op of a step: what the target adds there (nothing by default).
  virtual void emitAfterOp(mlir::Operation *op, const EmitContext &ctx) const {}
  /// The end of evalStep: `logits` (@eval_step's second result) copied to the step's
  /// `float *logits` argument as fp32, on the host.
  virtual mlir::LogicalResult emitLogitsCopy(mlir::Value logits, const EmitContext &ctx) = 0;
  /// `kSteps`, the target's steps table of the three step functions (CpuSteps, CudaSteps).
  virtual void emitSteps(mlir::ModuleOp module, llvm::raw_ostream &os) = 0;
};

/// `void cppName(parameters) {`, the body of the step `func` (each op's result pointers
/// declared as it defines them, then `kernels`' calls by `emitters`, then `afterOp`'s
/// additions; `timed`, each op between calls of ctx.opTimer's begin and end), `}`.
mlir::LogicalResult
emitStepFunction(mlir::func::FuncOp func, llvm::StringRef cppName, llvm::StringRef parameters,
                 KernelTarget kernels, llvm::ArrayRef<OpEmitter> emitters, llvm::raw_ostream &os,
                 llvm::function_ref<void(mlir::Operation *, const EmitContext &)> afterOp = {},
                 bool timed = false);

/// Writes the trainer source of a planned module (after -bertc-plan-buffers and
/// -bertc-derive-eval-step) for `target`, in order:
/// 1. the target's preamble;
/// 2. the parameter table and kPlan (TrainerPlanTable.h) with the job's `data` settings,
///    then the target's tables;
/// 3. microStep, optimizerStep and evalStep from @micro_step, @optimizer_step and
///    @eval_step: each op becomes the target's kernel calls on pointers declared at its
///    arena offsets, in program order; evalStep ends with the target's copy of the logits;
/// 4. the target's steps table, kTrainer and its export bertc_trainer().
/// Fails with a diagnostic on an op none of the target's emitters takes.
mlir::LogicalResult emitTrainer(mlir::ModuleOp module, const JobDataSettings &data,
                                TrainerTarget &target, llvm::raw_ostream &os);

} // namespace bertc
