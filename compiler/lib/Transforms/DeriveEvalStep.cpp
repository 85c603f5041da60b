//===- DeriveEvalStep.cpp - the forward-only step evaluation runs ---------===//
//
// Adds @eval_step to a planned module (see Passes.td) in three steps:
//   1. mark the ops of @micro_step that its returned loss depends on (a walk over
//      operands from the loss);
//   2. clone the marked ops in program order into @eval_step; the clones keep every
//      attribute, so their `bert.offsets` and parameter slots are the training step's;
//   3. set every dropout rate to 0 and return (loss, logits), or the loss alone for a loss
//      that has no logits (bert.lm_head_loss).
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace bertc {
#define GEN_PASS_DEF_DERIVEEVALSTEP
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// The ops `loss` depends on.
llvm::SetVector<Operation *> lossDependencies(Value loss) {
  llvm::SetVector<Operation *> needed;
  SmallVector<Value> pending = {loss};
  while (!pending.empty()) {
    Operation *def = pending.pop_back_val().getDefiningOp();
    if (!def || !needed.insert(def))
      continue;
    pending.append(def->operand_begin(), def->operand_end());
  }
  return needed;
}

/// Builds @eval_step from `microStep` at the builder's insertion point, or fails with a
/// diagnostic when the step does not return the result of a loss op.
LogicalResult buildEvalStep(func::FuncOp microStep, OpBuilder &builder) {
  Block &body = microStep.getBody().front();
  Operation *terminator = body.getTerminator();
  Operation *lossOp =
      terminator->getNumOperands() == 1 ? terminator->getOperand(0).getDefiningOp() : nullptr;
  if (!lossOp || !isa<CrossEntropyOp, MseLossOp, LmHeadLossOp>(lossOp))
    return microStep.emitError("@micro_step must return the result of a loss op "
                               "(bert.cross_entropy, bert.mse_loss or bert.lm_head_loss) to be "
                               "evaluated");
  Value loss = lossOp->getResult(0);
  Value logits = isa<LmHeadLossOp>(lossOp) ? Value() : lossOp->getOperand(0);
  SmallVector<Type, 2> results = {loss.getType()};
  if (logits)
    results.push_back(logits.getType());

  auto type = builder.getFunctionType({}, results);
  auto eval = builder.create<func::FuncOp>(microStep.getLoc(), bertc::kEvalStep, type);
  builder.setInsertionPointToStart(eval.addEntryBlock());
  llvm::SetVector<Operation *> needed = lossDependencies(loss);
  IRMapping mapping;
  for (Operation &op : body.without_terminator()) {
    if (!needed.contains(&op))
      continue;
    Operation *clone = builder.clone(op, mapping);
    if (auto dropout = dyn_cast<DropoutOp>(clone))
      dropout.setRateAttr(builder.getF32FloatAttr(0.0f));
    if (auto attention = dyn_cast<AttentionOp>(clone))
      attention.setDropoutAttr(builder.getF32FloatAttr(0.0f));
    if (auto addNorm = dyn_cast<AddLayerNormOp>(clone))
      addNorm.setDropoutAttr(builder.getF32FloatAttr(0.0f));
  }
  SmallVector<Value, 2> returned = {mapping.lookup(loss)};
  if (logits)
    returned.push_back(mapping.lookup(logits));
  builder.create<func::ReturnOp>(terminator->getLoc(), returned);
  return success();
}

struct DeriveEvalStepPass : bertc::impl::DeriveEvalStepBase<DeriveEvalStepPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(module);
    if (failed(microStep))
      return signalPassFailure();
    if (!bertc::findPlan(module)) {
      module.emitError("the module has no memory plan for @eval_step to share: run "
                       "-bertc-plan-buffers first");
      return signalPassFailure();
    }
    if (auto previous = module.lookupSymbol<func::FuncOp>(bertc::kEvalStep))
      previous.erase();
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    if (failed(buildEvalStep(*microStep, builder)))
      return signalPassFailure();
  }
};

} // namespace
