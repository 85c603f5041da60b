//===- TrainerEmitter.cpp - a trainer's source for any target -------------===//
//
// The parts every trainer source shares, in the order emitTrainer documents; a
// TrainerTarget writes the rest.
//
//===----------------------------------------------------------------------===//

#include "TrainerEmitter.h"

#include "TrainerPlanTable.h"
#include "bert/BertDialect.h"
#include "bertc/Analysis/TrainModule.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The module's @eval_step, which returns (loss, logits), or the loss alone where the loss
/// has no logits (bert.lm_head_loss); a diagnostic and failure when it has none.
FailureOr<func::FuncOp> getEvalStep(ModuleOp module) {
  auto eval = module.lookupSymbol<func::FuncOp>(kEvalStep);
  if (!eval)
    return module.emitError("module has no @eval_step: run -bertc-derive-eval-step");
  unsigned results = eval.getFunctionType().getNumResults();
  if (results != 1 && results != 2)
    return eval.emitError("@eval_step must return the loss and the logits, or the loss");
  return eval;
}

/// The body of a step function: each op's result pointers declared as it defines them,
/// then its kernel calls, `timed` between the op timer's begin and end.
LogicalResult emitStepBody(func::FuncOp func, EmitContext &ctx, ArrayRef<OpEmitter> emitters,
                           function_ref<void(Operation *, const EmitContext &)> afterOp = {},
                           bool timed = false) {
  ctx.os << "  std::byte *arena = ctx.arena;\n"
         << "  [[maybe_unused]] const int64_t B = ctx.batch, S = ctx.seq;\n";
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (failed(ctx.declareResults(&op)))
      return failure();
    if (isa<ParamOp, InputOp>(op))
      continue;
    if (timed)
      ctx.os << "  if (ctx.opTimer) ctx.opTimer->begin(\"" << op.getName().getStringRef()
             << "\");\n";
    if (failed(emitOp(&op, ctx, emitters)))
      return failure();
    if (afterOp)
      afterOp(&op, ctx);
    if (timed)
      ctx.os << "  if (ctx.opTimer) ctx.opTimer->end();\n";
  }
  return success();
}

} // namespace

LogicalResult emitStepFunction(func::FuncOp func, StringRef cppName, StringRef parameters,
                               KernelTarget kernels, ArrayRef<OpEmitter> emitters, raw_ostream &os,
                               function_ref<void(Operation *, const EmitContext &)> afterOp,
                               bool timed) {
  os << "void " << cppName << "(" << parameters << ") {\n";
  EmitContext ctx(os, kernels);
  if (failed(emitStepBody(func, ctx, emitters, afterOp, timed)))
    return failure();
  os << "}\n\n";
  return success();
}

/// A step function of `target` from `func`.
static LogicalResult emitTargetStep(func::FuncOp func, StringRef cppName,
                                    const TrainerTarget &target, raw_ostream &os,
                                    bool timed = false) {
  return emitStepFunction(
      func, cppName, target.stepParameters(), target.kernels(), target.opEmitters(), os,
      [&](Operation *op, const EmitContext &ctx) { target.emitAfterOp(op, ctx); }, timed);
}

LogicalResult TrainerTarget::emitTables(ModuleOp, raw_ostream &) { return success(); }

LogicalResult TrainerTarget::emitOptimizerStep(func::FuncOp optimizerStep, raw_ostream &os) {
  return emitTargetStep(optimizerStep, "optimizerStep", *this, os);
}

LogicalResult emitTrainer(ModuleOp module, const JobDataSettings &data, TrainerTarget &target,
                          raw_ostream &os) {
  FailureOr<func::FuncOp> microStep = getMicroStep(module);
  if (failed(microStep))
    return failure();
  FailureOr<func::FuncOp> optimizerStep = getOptimizerStep(module);
  if (failed(optimizerStep))
    return failure();
  FailureOr<func::FuncOp> evalStep = getEvalStep(module);
  if (failed(evalStep))
    return failure();
  bool planChecks = hasPlanChecks(module);
  if (failed(target.emitPreamble(module, planChecks, os)))
    return failure();
  os << "namespace {\n\n";
  emitParamTable(*microStep, os);
  if (failed(emitPlan(module, *microStep, data, planChecks, os)) ||
      failed(target.emitTables(module, os)) ||
      failed(emitTargetStep(*microStep, "microStep", target, os, timesOps(module))) ||
      failed(target.emitOptimizerStep(*optimizerStep, os)))
    return failure();

  os << "void evalStep(" << target.stepParameters() << ", float *logits) {\n";
  EmitContext ctx(os, target.kernels());
  if (failed(emitStepBody(*evalStep, ctx, target.opEmitters())))
    return failure();
  Operation *evalReturn = evalStep->getBody().front().getTerminator();
  if (evalReturn->getNumOperands() < 2)
    os << "  (void)logits; // the loss has no logits to copy\n";
  else if (failed(target.emitLogitsCopy(evalReturn->getOperand(1), ctx)))
    return failure();
  os << "}\n\n";

  target.emitSteps(module, os);
  emitTrainerEntry("kSteps", target.kernels() == KernelTarget::Cuda, os);
  return success();
}

} // namespace bertc
