//===- DecoderOps.cpp - verifiers of the decoder ops ----------------------===//
//
// RMSNorm, SiLU, mul, rotary embeddings and the LM head loss (BertDecoderOps.td): what
// their kernels rely on, each diagnostic naming the operand and both sizes (VerifierChecks.h).
//
//===----------------------------------------------------------------------===//

#include "VerifierChecks.h"

#include "bertc/abi/rope.h"

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::verify;

/// Fails unless `weight` is a [features] vector of `input`'s last dimension and epsilon is
/// positive.
static LogicalResult verifyRmsNorm(Operation *op, Value input, Value weight, float epsilon) {
  if (failed(expectRank(op, weight, "weight", 1)) ||
      failed(expectLastDim(op, weight, "weight", lastDim(input))))
    return failure();
  if (!(epsilon > 0.0f))
    return op->emitOpError() << "epsilon must be positive, got " << epsilon;
  return success();
}

/// Fails unless `input` is [batch, seq, heads * head_dim] with an even head_dim of
/// 2 * inv_freq.size() values, and `positions` is [batch, seq].
static LogicalResult verifyRope(Operation *op, Value input, Value positions, int64_t heads,
                                ArrayRef<float> invFreq) {
  if (failed(expectRank(op, input, "input", 3)) ||
      failed(expectRank(op, positions, "positions", 2)))
    return failure();
  auto in = tensorType(input).getShape(), pos = tensorType(positions).getShape();
  if (in[0] != pos[0] || in[1] != pos[1])
    return op->emitOpError() << "positions " << positions.getType()
                             << " must be the [batch, seq] of input " << input.getType();
  if (heads <= 0)
    return op->emitOpError() << "heads must be positive, got " << heads;
  if (invFreq.empty())
    return op->emitOpError("inv_freq must hold head_dim / 2 values, got none");
  if (int64_t(invFreq.size()) > bertc::kRopeMaxFrequencies)
    return op->emitOpError() << "inv_freq holds " << invFreq.size() << " values, more than the "
                             << bertc::kRopeMaxFrequencies << " the kernels take (head_dim "
                             << 2 * bertc::kRopeMaxFrequencies << ")";
  int64_t hidden = in[2], headDim = 2 * int64_t(invFreq.size());
  if (!ShapedType::isDynamic(hidden) && hidden != heads * headDim)
    return op->emitOpError() << "input's last dimension " << hidden << " must be " << heads
                             << " heads of " << headDim << " (2 x " << invFreq.size()
                             << " inv_freq values)";
  return success();
}

/// Fails unless `hidden` is [batch, seq, width], `labels` its [batch, seq], `weight` a
/// static [vocab, width] of hidden's storage type, `tokenChunk` not negative (0: not chosen
/// yet) and `scale` positive.
static LogicalResult verifyLmHeadLoss(Operation *op, Value hidden, Value weight, Value labels,
                                      int64_t tokenChunk, float scale) {
  if (failed(expectRank(op, hidden, "hidden", 3)) || failed(expectRank(op, weight, "weight", 2)) ||
      failed(expectRank(op, labels, "labels", 2)) ||
      failed(expectLastDim(op, weight, "weight", lastDim(hidden))))
    return failure();
  auto h = tensorType(hidden).getShape(), l = tensorType(labels).getShape();
  if (h[0] != l[0] || h[1] != l[1])
    return op->emitOpError() << "labels " << labels.getType()
                             << " must be the [batch, seq] of hidden " << hidden.getType();
  if (!tensorType(weight).hasStaticShape())
    return op->emitOpError() << "weight " << weight.getType() << " must have a static shape";
  if (tensorType(weight).getElementType() != tensorType(hidden).getElementType())
    return op->emitOpError() << "weight " << weight.getType() << " and hidden " << hidden.getType()
                             << " must share a storage type";
  if (tokenChunk < 0)
    return op->emitOpError() << "token_chunk must not be negative, got " << tokenChunk;
  if (!(scale > 0.0f))
    return op->emitOpError() << "scale must be positive, got " << scale;
  return success();
}

LogicalResult RmsNormOp::verify() {
  if (failed(expectSameType(*this, getInput(), "input", getResult(), "result")))
    return failure();
  return verifyRmsNorm(*this, getInput(), getWeight(), getEpsilon().convertToFloat());
}

LogicalResult RmsNormGradOp::verify() {
  if (failed(expectSameType(*this, getResultGrad(), "result gradient", getInput(), "input")) ||
      failed(expectSameType(*this, getInput(), "input", getInputGrad(), "input gradient")) ||
      failed(expectSameShape(*this, getWeight(), "weight", getWeightGrad(), "weight gradient")))
    return failure();
  return verifyRmsNorm(*this, getInput(), getWeight(), getEpsilon().convertToFloat());
}

LogicalResult SiluOp::verify() { return success(); }

LogicalResult SiluGradOp::verify() {
  if (failed(expectSameType(*this, getResultGrad(), "result gradient", getInput(), "input")))
    return failure();
  return expectSameType(*this, getResultGrad(), "result gradient", getInputGrad(),
                        "input gradient");
}

LogicalResult MulOp::verify() { return success(); }

LogicalResult RopeOp::verify() {
  if (failed(expectSameType(*this, getInput(), "input", getResult(), "result")))
    return failure();
  return verifyRope(*this, getInput(), getPositions(), getHeads(), getInvFreq());
}

LogicalResult RopeGradOp::verify() {
  if (failed(expectSameType(*this, getResultGrad(), "result gradient", getInputGrad(),
                            "input gradient")))
    return failure();
  return verifyRope(*this, getResultGrad(), getPositions(), getHeads(), getInvFreq());
}

LogicalResult LmHeadLossOp::verify() {
  return verifyLmHeadLoss(*this, getHidden(), getWeight(), getLabels(), getTokenChunk(),
                          getScale().convertToFloat());
}

LogicalResult LmHeadLossGradOp::verify() {
  if (failed(expectSameType(*this, getHidden(), "hidden", getHiddenGrad(), "hidden gradient")) ||
      (getWeightGrad() &&
       failed(expectSameShape(*this, getWeight(), "weight", getWeightGrad(), "weight gradient"))))
    return failure();
  return verifyLmHeadLoss(*this, getHidden(), getWeight(), getLabels(), getTokenChunk(),
                          getScale().convertToFloat());
}

// The parameter is the weight the logits are made from.
LogicalResult AccumulateLmHeadLossGradOp::verify() {
  if (failed(expectTrainableParam(*this, getParam())) ||
      failed(expectSameType(*this, getHidden(), "hidden", getHiddenGrad(), "hidden gradient")))
    return failure();
  return verifyLmHeadLoss(*this, getHidden(), getParam(), getLabels(), getTokenChunk(),
                          getScale().convertToFloat());
}

// Both factors are read at the index the product is written to.
SmallVector<unsigned> MulOp::getReusableOperands() { return {0, 1}; }
