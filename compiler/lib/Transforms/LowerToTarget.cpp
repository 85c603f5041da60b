//===- LowerToTarget.cpp - the kernels a target runs, in the IR -----------===//
//
// Marks each op whose kernels differ between the targets in what they compute with the
// target's choice (see Passes.td): with tf32, the cuda target's fp32 GEMMs round their
// operands to TF32; attention runs fused or as GEMMs over chunks of heads (whose GEMMs
// take tf32 too), a chunk whole groups of the query heads that share a key/value head; the
// LM head loss takes its tokens token_chunk at a time.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"
#include "bertc/abi/lm_head_loss.h"

#include "llvm/ADT/TypeSwitch.h"

namespace bertc {
#define GEN_PASS_DEF_LOWERTOTARGET
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// The [vocab, width] weight of an LM head loss op; null for any other op.
Value lmHeadWeight(Operation *op) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case<LmHeadLossOp, LmHeadLossGradOp>([](auto loss) { return loss.getWeight(); })
      .Case([](AccumulateLmHeadLossGradOp grad) { return grad.getParam(); })
      .Default([](Operation *) { return Value(); });
}

/// Sets every LM head loss op's token_chunk: `pinned` (at most the step's tokens) when
/// positive, else the default of bertc/abi/lm_head_loss.h, at the module's bounds.
LogicalResult markLmHeadLosses(ModuleOp module, int64_t pinned) {
  SmallVector<std::pair<Operation *, Value>> ops;
  module.walk([&](Operation *op) {
    if (Value weight = lmHeadWeight(op))
      ops.push_back({op, weight});
  });
  if (ops.empty())
    return success();
  FailureOr<bertc::DimBounds> bounds = bertc::getDimBounds(module);
  if (failed(bounds))
    return failure();
  int64_t tokens = bounds->maxBatch * bounds->maxSeq;
  for (auto [op, weight] : ops) {
    int64_t vocab = cast<RankedTensorType>(weight.getType()).getShape()[0];
    int64_t chunk =
        pinned > 0 ? std::min(pinned, tokens) : bertc::defaultLmHeadTokenChunk(vocab, tokens);
    op->setAttr("token_chunk", IntegerAttr::get(IntegerType::get(module.getContext(), 64), chunk));
  }
  return success();
}

struct LowerToTargetPass : bertc::impl::LowerToTargetBase<LowerToTargetPass> {
  using LowerToTargetBase::LowerToTargetBase;

  void runOnOperation() override {
    if (target != "cpu" && target != "cuda") {
      getOperation().emitError() << "-bertc-lower-to-target: unknown target '" << target
                                 << "' (expected cpu or cuda)";
      return signalPassFailure();
    }
    bool cuda = target == "cuda";
    if (tf32 && !cuda) {
      getOperation().emitError() << "-bertc-lower-to-target: tf32 needs target=cuda";
      return signalPassFailure();
    }
    if (attentionHeadChunk < 0) {
      getOperation().emitError() << "-bertc-lower-to-target: attention-head-chunk "
                                 << int64_t(attentionHeadChunk) << " is negative";
      return signalPassFailure();
    }
    if (lmHeadTokenChunk < 0) {
      getOperation().emitError() << "-bertc-lower-to-target: lm-head-token-chunk "
                                 << int64_t(lmHeadTokenChunk) << " is negative";
      return signalPassFailure();
    }
    if (failed(markLmHeadLosses(getOperation(), lmHeadTokenChunk)))
      return signalPassFailure();
    // The option's chunk, at most the heads and rounded down to whole groups (at least one).
    auto headChunk = [&](int64_t heads, int64_t keyValueHeads) {
      int64_t group = heads / keyValueHeads;
      int64_t chunk = std::min<int64_t>(attentionHeadChunk, heads);
      if (chunk > 0)
        chunk = std::max(group, chunk / group * group);
      return IntegerAttr::get(IntegerType::get(&getContext(), 64), chunk);
    };
    auto isF32 = [](Value operand) {
      return cast<RankedTensorType>(operand.getType()).getElementType().isF32();
    };
    // Tensor-core attention's GEMMs take tf32 as the linear layers' do; the fused kernel
    // has none.
    auto markAttention = [&](Operation *op, IntegerAttr chunk, bool fp32) {
      op->setAttr("head_chunk", chunk);
      if (tf32 && fp32 && chunk.getInt() > 0)
        op->setAttr("tf32", UnitAttr::get(&getContext()));
      else
        op->removeAttr("tf32");
    };
    getOperation().walk([&](Operation *op) {
      if (auto linear = dyn_cast<LinearOp>(op))
        linear.setTf32(tf32 && isF32(linear.getInput()));
      else if (auto grad = dyn_cast<LinearGradInputOp>(op))
        grad.setTf32(tf32 && isF32(grad.getResultGrad()));
      else if (auto grad = dyn_cast<LinearGradWeightOp>(op))
        grad.setTf32(tf32 && isF32(grad.getInput()));
      else if (auto attention = dyn_cast<AttentionOp>(op))
        markAttention(op, headChunk(attention.getHeads(), attention.getKeyValueHeads()),
                      isF32(attention.getQuery()));
      else if (auto grad = dyn_cast<AttentionGradOp>(op))
        markAttention(op, headChunk(grad.getHeads(), grad.getKeyValueHeads()),
                      isF32(grad.getQuery()));
    });
  }
};

} // namespace
