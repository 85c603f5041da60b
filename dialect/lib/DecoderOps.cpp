//===- DecoderOps.cpp - verifiers of the decoder ops ----------------------===//
//
// RMSNorm, SiLU, mul and rotary embeddings (BertDecoderOps.td): what their kernels rely
// on, each diagnostic naming the operand and both sizes (VerifierChecks.h).
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

// Both factors are read at the index the product is written to.
SmallVector<unsigned> MulOp::getReusableOperands() { return {0, 1}; }
