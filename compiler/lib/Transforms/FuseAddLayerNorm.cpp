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

/// Folds `add` and the LayerNorm right after it that normalises its sum into one
/// add_layernorm at the LayerNorm's place. Only when adjacent, so that no lifetime moves
/// by more than that one step.
void fuseWithLayerNorm(AddOp add) {
  auto norm = dyn_cast_or_null<LayerNormOp>(add->getNextNode());
  if (!norm || norm.getInput() != add.getResult())
    return;
  OpBuilder builder(norm);
  auto fused = builder.create<AddLayerNormOp>(
      norm.getLoc(), add.getType(), norm.getResult().getType(), add.getLhs(), add.getRhs(),
      norm.getGamma(), norm.getBeta(), norm.getEpsilon());
  norm.getResult().replaceAllUsesWith(fused.getOutput());
  add.getResult().replaceAllUsesWith(fused.getSum());
  norm.erase();
  add.erase();
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
