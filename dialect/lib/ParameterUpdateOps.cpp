//===- ParameterUpdateOps.cpp - verifiers of the parameter updates -------===//
//
// The ops of BertParameterUpdateOps.td write a trainable parameter's fp32 gradient slot,
// or the parameter itself, so each first checks that its parameter is a trainable
// bert.param. (Also: the operand whose bytes each backward fused with a bias gradient may
// write its result over.)
//
//===----------------------------------------------------------------------===//

#include "VerifierChecks.h"

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::verify;

LogicalResult AccumulateGradOp::verify() {
  if (failed(expectTrainableParam(*this, getParam())))
    return failure();
  return expectSameShape(*this, getParam(), "parameter", getGrad(), "gradient");
}

LogicalResult AccumulateLinearGradWeightOp::verify() {
  if (failed(expectTrainableParam(*this, getParam())))
    return failure();
  return expectWeightGradient(*this, getParam(), "parameter", getResultGrad(), getInput(),
                              getTf32());
}

LogicalResult AccumulateBiasGradOp::verify() {
  if (failed(expectTrainableParam(*this, getParam())) ||
      failed(expectRank(*this, getParam(), "parameter", 1)))
    return failure();
  return expectLastDim(*this, getResultGrad(), "result gradient", lastDim(getParam()));
}

LogicalResult AccumulateEmbeddingGradOp::verify() {
  if (failed(expectTrainableParam(*this, getParam())) ||
      failed(expectRank(*this, getParam(), "parameter", 2)) ||
      failed(expectPaddingRow(*this, getPaddingIdx(), getParam())))
    return failure();
  return expectLastDim(*this, getResultGrad(), "result gradient", lastDim(getParam()));
}

namespace {
/// The checks of a backward fused with the accumulation of its input gradient's column sums
/// into the trainable bias `param`.
LogicalResult expectBiasOfInputGrad(Operation *op, Value param, Value resultGrad, Value inputGrad) {
  if (failed(expectTrainableParam(op, param)))
    return failure();
  return expectInputGradAndColumnSum(op, resultGrad, inputGrad, param, "parameter");
}
} // namespace

LogicalResult GeluGradAccumulateBiasOp::verify() {
  if (failed(expectBiasOfInputGrad(*this, getParam(), getResultGrad(), getInputGrad())))
    return failure();
  return expectSameType(*this, getInput(), "input", getInputGrad(), "input gradient");
}

LogicalResult DropoutGradAccumulateBiasOp::verify() {
  if (failed(expectBiasOfInputGrad(*this, getParam(), getResultGrad(), getInputGrad())))
    return failure();
  return expectRate(*this, "rate", getRate().convertToFloat());
}

SmallVector<unsigned> GeluGradAccumulateBiasOp::getReusableOperands() { return {1}; }
SmallVector<unsigned> DropoutGradAccumulateBiasOp::getReusableOperands() { return {1}; }

LogicalResult AccumulateLayerNormGradOp::verify() {
  if (failed(expectTrainableParam(*this, getGamma())) ||
      failed(expectTrainableParam(*this, getBeta())) ||
      failed(expectRank(*this, getGamma(), "gamma", 1)) ||
      failed(expectSameShape(*this, getGamma(), "gamma", getBeta(), "beta")) ||
      failed(expectSameType(*this, getResultGrad(), "result gradient", getInput(), "input")) ||
      failed(expectSameType(*this, getInput(), "input", getInputGrad(), "input gradient")))
    return failure();
  return expectLastDim(*this, getGamma(), "gamma", lastDim(getInput()));
}

LogicalResult AdamWOp::verify() {
  if (failed(expectTrainableParam(*this, getParam())) ||
      failed(expectRate(*this, "beta1", getBeta1().convertToDouble())) ||
      failed(expectRate(*this, "beta2", getBeta2().convertToDouble())))
    return failure();
  if (getEpsilon().convertToDouble() <= 0.0)
    return emitOpError("epsilon must be positive");
  if (getWeightDecay().convertToDouble() < 0.0)
    return emitOpError("weight_decay must not be negative");
  if (std::optional<int64_t> block = getStateBlock(); block && *block != 256 && *block != 2048)
    return emitOpError("state_block must be 256 or 2048, not ") << *block;
  if (Value grad = getGrad()) {
    if (!cast<RankedTensorType>(grad.getType()).getElementType().isF32())
      return emitOpError("gradient must be f32, not ") << grad.getType();
    return expectSameShape(*this, getParam(), "parameter", grad, "gradient");
  }
  return success();
}
