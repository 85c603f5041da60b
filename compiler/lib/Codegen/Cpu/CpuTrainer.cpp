//===- CpuTrainer.cpp - C++ source of a CPU trainer -----------------------===//
//
// Emits, for a planned module, trainer.cpp (bertc/abi/trainer.h):
// 1. the parameter table (HF name, shape, value/gradient/moment slots, init);
// 2. kPlan: arena size, regions, input slots and the [train] settings;
// 3. microStep and optimizerStep: each op of the step functions becomes a kernel call on
//    pointers declared at the op's arena offsets, in program order (with plan checks, between
//    calls that report its reads, results and releases);
// 4. evalStep from @eval_step (-bertc-derive-eval-step), which copies its logits out as
//    fp32;
// 5. kTrainer and its export, bertc_trainer().
//
//===----------------------------------------------------------------------===//

#include "bertc/Codegen/CpuTrainer.h"

#include "../TrainerPlanTable.h"
#include "CpuEmitters.h"
#include "bert/BertDialect.h"
#include "bertc/Analysis/StepLiveness.h"
#include "bertc/Analysis/TrainModule.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The arena offset of an op result, -1 for parameters and inputs.
int64_t arenaOffset(Value value) {
  auto result = dyn_cast<OpResult>(value);
  auto offsets =
      result ? result.getOwner()->getAttrOfType<DenseI64ArrayAttr>("arena.offsets") : nullptr;
  return offsets && isPlannedActivation(value) ? offsets[result.getResultNumber()] : -1;
}

/// The last op of `block` that uses each planned activation (its definer if none).
llvm::DenseMap<Value, Operation *> lastUsers(Block &block) {
  llvm::DenseMap<Value, Operation *> last;
  for (Operation &op : block) {
    for (Value result : op.getResults())
      if (isPlannedActivation(result))
        last[result] = &op;
    for (Value operand : op.getOperands())
      if (isPlannedActivation(operand))
        last[operand] = &op;
  }
  return last;
}

/// Plan-check hooks around one op's kernel calls: its planned operands are read-checked
/// before, its results defined after, and the tensors it used last released.
void emitPlanCheckReads(Operation &op, const EmitContext &ctx, raw_ostream &os) {
  for (Value operand : op.getOperands())
    if (isPlannedActivation(operand))
      os << "  planCheckRead(ctx, " << ctx.name(operand) << ", " << EmitContext::bytes(operand)
         << ", " << ctx.id(operand) << ", \"" << op.getName() << "\", \"" << ctx.describe(operand)
         << "\");\n";
}

void emitPlanCheckUpdates(Operation &op, const EmitContext &ctx, ValueRange keepAlive,
                          const llvm::DenseMap<Value, Operation *> &last, raw_ostream &os) {
  for (Value result : op.getResults())
    os << "  planCheckDefine(ctx, " << ctx.name(result) << ", " << EmitContext::bytes(result)
       << ", " << ctx.id(result) << ", \"" << ctx.name(result) << "\");\n";
  llvm::SmallPtrSet<Value, 4> released;
  auto release = [&](Value value) {
    if (llvm::is_contained(keepAlive, value) || last.lookup(value) != &op ||
        !released.insert(value).second)
      return;
    os << "  planCheckRelease(ctx, " << ctx.name(value) << ", " << EmitContext::bytes(value) << ", "
       << ctx.id(value) << ");\n";
  };
  // An in-place result took over its dying operand's bytes: they are not released.
  auto takenOver = [&](Value operand) {
    return llvm::any_of(op.getResults(),
                        [&](Value result) { return arenaOffset(result) == arenaOffset(operand); });
  };
  for (Value operand : op.getOperands())
    if (isPlannedActivation(operand) && !takenOver(operand))
      release(operand);
  for (Value result : op.getResults())
    release(result);
}

/// The body of a step function: pointers declared as their values are defined, then the
/// call, between plan-check calls when `planChecks`. The values the function returns stay
/// owned to its end.
LogicalResult emitStepBody(func::FuncOp func, bool planChecks, EmitContext &ctx, raw_ostream &os) {
  os << "  std::byte *arena = ctx.arena;\n"
     << "  [[maybe_unused]] const int64_t B = ctx.batch, S = ctx.seq;\n";
  Block &body = func.getBody().front();
  llvm::DenseMap<Value, Operation *> last = lastUsers(body);
  ValueRange returned = body.getTerminator()->getOperands();
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      continue;
    if (failed(ctx.declareResults(&op)))
      return failure();
    if (isa<ParamOp, InputOp>(op))
      continue;
    if (planChecks)
      emitPlanCheckReads(op, ctx, os);
    if (failed(
            emitOp(&op, ctx, {emitGemmOp, emitAttentionOp, emitPointwiseOp, emitLossOptimizerOp})))
      return failure();
    if (planChecks)
      emitPlanCheckUpdates(op, ctx, returned, last, os);
  }
  return success();
}

/// One step function `void cppName(const StepContext &ctx)`.
LogicalResult emitStepFunction(func::FuncOp func, StringRef cppName, bool planChecks,
                               raw_ostream &os) {
  os << "void " << cppName << "(const StepContext &ctx) {\n";
  EmitContext ctx(os);
  if (failed(emitStepBody(func, planChecks, ctx, os)))
    return failure();
  os << "}\n\n";
  return success();
}

/// evalStep: @eval_step, then its logits (its second result) copied out as fp32.
LogicalResult emitEvalStep(ModuleOp module, bool planChecks, raw_ostream &os) {
  auto eval = module.lookupSymbol<func::FuncOp>(kEvalStep);
  if (!eval)
    return module.emitError("module has no @eval_step: run -bertc-derive-eval-step");
  if (eval.getFunctionType().getNumResults() != 2)
    return eval.emitError("@eval_step must return the loss and the logits");
  os << "void evalStep(const StepContext &ctx, float *logits) {\n";
  EmitContext ctx(os);
  if (failed(emitStepBody(eval, planChecks, ctx, os)))
    return failure();
  Value logits = eval.getBody().front().getTerminator()->getOperand(1);
  if (planChecks)
    os << "  planCheckRead(ctx, " << ctx.name(logits) << ", " << EmitContext::bytes(logits) << ", "
       << ctx.id(logits) << ", \"evalStep\", \"" << ctx.describe(logits) << "\");\n";
  os << "  for (int64_t i = 0; i < " << EmitContext::numel(logits) << "; ++i)\n"
     << "    logits[i] = float(" << ctx.name(logits) << "[i]);\n"
     << "}\n\n";
  return success();
}

} // namespace

LogicalResult emitCpuTrainer(ModuleOp module, bool planChecks, raw_ostream &os) {
  FailureOr<func::FuncOp> microStep = getMicroStep(module);
  if (failed(microStep))
    return failure();
  FailureOr<func::FuncOp> optimizerStep = getOptimizerStep(module);
  if (failed(optimizerStep))
    return failure();

  os << "// Generated by bertc: a CPU trainer. Every pointer below is a slot of the one\n"
     << "// arena the runtime allocates; offsets come from the memory plan.\n"
     << "#include \"bertc/abi/trainer.h\"\n"
     << "#include \"bertc/runtime/cpu_kernels.h\"\n"
     << (planChecks ? "#include \"bertc/runtime/plan_check.h\"\n\n" : "\n")
     << "using namespace bertc;\n\n"
     << "namespace {\n\n";
  emitParamTable(*microStep, os);
  if (failed(emitPlan(module, *microStep, planChecks, os)) ||
      failed(emitStepFunction(*microStep, "microStep", planChecks, os)) ||
      failed(emitStepFunction(*optimizerStep, "optimizerStep", planChecks, os)) ||
      failed(emitEvalStep(module, planChecks, os)))
    return failure();
  os << "const CpuSteps kSteps = {microStep, optimizerStep, evalStep};\n";
  emitTrainerEntry("kSteps", /*cuda=*/false, os);
  return success();
}

} // namespace bertc
