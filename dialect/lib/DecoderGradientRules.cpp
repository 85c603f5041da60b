//===- DecoderGradientRules.cpp - the decoder ops' vector-Jacobian products -===//
//
// GradientOpInterface for RMSNorm, SiLU, mul, rotary embeddings and the LM head loss: each
// rule builds only the gradients needed, at the forward op's location.
//
//===----------------------------------------------------------------------===//

#include "bert/BertDialect.h"

using namespace mlir;
using namespace mlir::bert;

SmallVector<Value> RmsNormOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                             ArrayRef<bool> needed) {
  auto grad =
      b.create<RmsNormGradOp>(getLoc(), TypeRange{getInput().getType(), getWeight().getType()},
                              resultGrads[0], getInput(), getWeight(), getEpsilonAttr());
  return {needed[0] ? grad.getInputGrad() : Value(), needed[1] ? grad.getWeightGrad() : Value()};
}

SmallVector<Value> SiluOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {b.create<SiluGradOp>(getLoc(), getType(), resultGrads[0], getInput())};
}

// d lhs = dy * rhs, d rhs = dy * lhs.
SmallVector<Value> MulOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                         ArrayRef<bool> needed) {
  Value dy = resultGrads[0];
  return {needed[0] ? b.create<MulOp>(getLoc(), getType(), dy, getRhs()).getResult() : Value(),
          needed[1] ? b.create<MulOp>(getLoc(), getType(), dy, getLhs()).getResult() : Value()};
}

// The positions are integers: they get no gradient.
SmallVector<Value> RopeOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {b.create<RopeGradOp>(getLoc(), getType(), resultGrads[0], getPositions(), getHeadsAttr(),
                               getInvFreqAttr()),
          Value()};
}

// One backward op for both gradients, as both come from the same recomputed logits; a
// frozen weight gets no [vocab, hidden] gradient. The labels get none.
SmallVector<Value> LmHeadLossOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                                ArrayRef<bool> needed) {
  Type weightGrad = needed[1] ? getWeight().getType() : Type();
  auto grad = b.create<LmHeadLossGradOp>(getLoc(), getHidden().getType(), weightGrad,
                                         resultGrads[0], getHidden(), getWeight(), getLabels(),
                                         getTokenChunkAttr(), getScaleAttr());
  return {needed[0] ? grad.getHiddenGrad() : Value(), grad.getWeightGrad(), Value()};
}
