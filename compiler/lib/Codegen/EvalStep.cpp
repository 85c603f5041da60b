//===- EvalStep.cpp - the forward-only step evaluation runs ---------------===//
//
// Builds the evaluation step in three steps:
//   1. mark the ops the returned loss depends on (a walk over operands from the loss);
//   2. clone the marked ops in program order; the clones keep every attribute, so their
//      `arena.offsets` and parameter slots are the training step's;
//   3. set every dropout rate to 0 and return (loss, logits).
//
//===----------------------------------------------------------------------===//

#include "EvalStep.h"

#include "bert/BertDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// Ops of `body` that `loss` depends on.
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

} // namespace

FailureOr<OwningOpRef<func::FuncOp>> buildEvalStep(func::FuncOp microStep) {
  Block &body = microStep.getBody().front();
  Operation *terminator = body.getTerminator();
  Operation *lossOp =
      terminator->getNumOperands() == 1 ? terminator->getOperand(0).getDefiningOp() : nullptr;
  if (!lossOp || !isa<CrossEntropyOp, MseLossOp>(lossOp))
    return microStep.emitError("@micro_step must return the result of a loss op "
                               "(bert.cross_entropy or bert.mse_loss) to be evaluated");
  Value loss = lossOp->getResult(0), logits = lossOp->getOperand(0);

  OpBuilder builder(microStep.getContext());
  auto type = builder.getFunctionType({}, {loss.getType(), logits.getType()});
  OwningOpRef<func::FuncOp> eval = func::FuncOp::create(microStep.getLoc(), "eval_step", type);
  builder.setInsertionPointToStart(eval->addEntryBlock());
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
  }
  builder.create<func::ReturnOp>(terminator->getLoc(),
                                 ValueRange{mapping.lookup(loss), mapping.lookup(logits)});
  return eval;
}

} // namespace bertc
