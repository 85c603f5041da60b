//===- FuseAddLayerNorm.cpp - each residual add and its LayerNorm as one op ===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

namespace bertc {
#define GEN_PASS_DEF_FUSEADDLAYERNORM
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// The dropout right before `add` whose result only `add` reads, if `add` has one, and
/// the other addend.
std::pair<DropoutOp, Value> droppedAddend(AddOp add) {
  auto dropout = dyn_cast_or_null<DropoutOp>(add->getPrevNode());
  if (!dropout || !dropout.getResult().hasOneUse() || *dropout->user_begin() != add)
    return {};
  if (add.getLhs() == dropout.getResult())
    return {dropout, add.getRhs()};
  return {dropout, add.getLhs()};
}

/// Folds `add` and the LayerNorm right after it that normalises its sum into one
/// add_layernorm at the LayerNorm's place, with a dropout right before the add of one
/// addend folded in too. Only when adjacent, so that no lifetime moves by more than the
/// ops folded.
void fuseWithLayerNorm(AddOp add) {
  auto norm = dyn_cast_or_null<LayerNormOp>(add->getNextNode());
  if (!norm || norm.getInput() != add.getResult())
    return;
  // a + b and b + a round alike, so a dropped addend may always be the lhs.
  auto [dropout, residual] = droppedAddend(add);
  Value lhs = dropout ? dropout.getInput() : add.getLhs();
  Value rhs = dropout ? residual : add.getRhs();
  OpBuilder builder(norm);
  auto fused = builder.create<AddLayerNormOp>(
      norm.getLoc(), add.getType(), norm.getResult().getType(), lhs, rhs, norm.getGamma(),
      norm.getBeta(), norm.getEpsilonAttr(),
      dropout ? dropout.getRateAttr() : builder.getF32FloatAttr(0.0f),
      dropout ? dropout.getStreamAttr() : builder.getI32IntegerAttr(0));
  norm.getResult().replaceAllUsesWith(fused.getOutput());
  add.getResult().replaceAllUsesWith(fused.getSum());
  norm.erase();
  add.erase();
  if (dropout)
    dropout.erase();
}

struct FuseAddLayerNormPass : bertc::impl::FuseAddLayerNormBase<FuseAddLayerNormPass> {
  void runOnOperation() override {
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(getOperation());
    if (failed(microStep))
      return signalPassFailure();
    // A fusion erases the LayerNorm after its add: a copy of the list is walked.
    for (AddOp add : llvm::to_vector(microStep->getBody().getOps<AddOp>()))
      fuseWithLayerNorm(add);
  }
};

} // namespace
