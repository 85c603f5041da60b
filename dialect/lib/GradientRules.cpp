//===- GradientRules.cpp - each forward op's vector-Jacobian product -------===//
//
// The GradientOpInterface implementations. Each rule builds only the gradients that
// are needed (a frozen weight's matmul is never emitted) and places the backward ops
// at the forward op's location, so the memory report can trace them to the TOML.
//
//===----------------------------------------------------------------------===//

#include "bert/BertDialect.h"

using namespace mlir;
using namespace mlir::bert;

SmallVector<Value> EmbeddingOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                               ArrayRef<bool> needed) {
  SmallVector<Value> grads(2);
  if (needed[1])
    grads[1] = b.create<EmbeddingGradOp>(getLoc(), getTable().getType(), resultGrads[0], getIds(),
                                         getPaddingIdxAttr());
  return grads;
}

SmallVector<Value> AddOp::buildGradients(OpBuilder &, ValueRange resultGrads,
                                         ArrayRef<bool> needed) {
  return {needed[0] ? resultGrads[0] : Value(), needed[1] ? resultGrads[0] : Value()};
}

SmallVector<Value> CastOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {b.create<CastOp>(getLoc(), getInput().getType(), resultGrads[0])};
}

SmallVector<Value> LayerNormOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                               ArrayRef<bool> needed) {
  auto grad = b.create<LayerNormGradOp>(
      getLoc(), TypeRange{getInput().getType(), getGamma().getType(), getBeta().getType()},
      resultGrads[0], getInput(), getGamma(), getEpsilonAttr());
  return {grad.getInputGrad(), needed[1] ? grad.getGammaGrad() : Value(),
          needed[2] ? grad.getBetaGrad() : Value()};
}

SmallVector<Value> LinearOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                            ArrayRef<bool> needed) {
  Value dy = resultGrads[0];
  SmallVector<Value> grads(needed.size());
  if (needed[0])
    grads[0] = b.create<LinearGradInputOp>(getLoc(), getInput().getType(), dy, getWeight());
  if (needed[1])
    grads[1] = b.create<LinearGradWeightOp>(getLoc(), getWeight().getType(), dy, getInput());
  // A linear without bias has no third operand, and so no column sum of dy.
  if (getBias() && needed[2])
    grads[2] = b.create<BiasGradOp>(getLoc(), getBias().getType(), dy);
  return grads;
}

SmallVector<Value> GeluOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {b.create<GeluGradOp>(getLoc(), getType(), resultGrads[0], getInput(), getApproximate())};
}

SmallVector<Value> TanhOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {b.create<TanhGradOp>(getLoc(), getType(), resultGrads[0], getResult())};
}

SmallVector<Value> ReluOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {b.create<ReluGradOp>(getLoc(), getType(), resultGrads[0], getResult())};
}

SmallVector<Value> DropoutOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {
      b.create<DropoutGradOp>(getLoc(), getType(), resultGrads[0], getRateAttr(), getStreamAttr())};
}

SmallVector<Value> AttentionOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                               ArrayRef<bool> needed) {
  // dk and dv have the key's and value's types: kv_heads heads, each its group's sum.
  auto grad = b.create<AttentionGradOp>(
      getLoc(), TypeRange{getQuery().getType(), getKey().getType(), getValue().getType()},
      resultGrads[0], getQuery(), getKey(), getValue(), getMask(), getResult(), getLse(),
      getHeadsAttr(), getDropoutAttr(), getStreamAttr(), getHeadChunkAttr(), getTf32Attr(),
      getKvHeadsAttr(), getCausalAttr());
  return {needed[0] ? grad.getQueryGrad() : Value(), needed[1] ? grad.getKeyGrad() : Value(),
          needed[2] ? grad.getValueGrad() : Value(), Value()};
}

SmallVector<Value> SelectTokenOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                                 ArrayRef<bool>) {
  return {
      b.create<SelectTokenGradOp>(getLoc(), getInput().getType(), resultGrads[0], getIndexAttr())};
}

SmallVector<Value> MeanTokensOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                                ArrayRef<bool>) {
  return {b.create<MeanTokensGradOp>(getLoc(), getInput().getType(), resultGrads[0], getMask()),
          Value()};
}

SmallVector<Value> MaxTokensOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                               ArrayRef<bool>) {
  return {b.create<MaxTokensGradOp>(getLoc(), getInput().getType(), resultGrads[0], getInput(),
                                    getMask()),
          Value()};
}

SmallVector<Value> ConcatOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                            ArrayRef<bool> needed) {
  SmallVector<Value> grads;
  int64_t start = 0;
  for (auto [input, need] : llvm::zip_equal(getInputs(), needed)) {
    grads.push_back(need ? b.create<ConcatGradOp>(getLoc(), input.getType(), resultGrads[0],
                                                  b.getI64IntegerAttr(start))
                         : Value());
    start += cast<RankedTensorType>(input.getType()).getShape().back();
  }
  return grads;
}

SmallVector<Value> SliceOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {b.create<SliceGradOp>(getLoc(), getInput().getType(), resultGrads[0], getStartAttr())};
}

SmallVector<Value> FlattenOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {b.create<FlattenGradOp>(getLoc(), getInput().getType(), resultGrads[0])};
}

SmallVector<Value> CrossEntropyOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                                  ArrayRef<bool> needed) {
  SmallVector<Value> grads(2);
  if (needed[0])
    grads[0] = b.create<CrossEntropyGradOp>(getLoc(), getLogits().getType(), resultGrads[0],
                                            getLogits(), getLabels(), getScaleAttr());
  return grads;
}

// A swap of the last two dimensions is its own inverse.
SmallVector<Value> TransposeOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                               ArrayRef<bool>) {
  return {b.create<TransposeOp>(getLoc(), getInput().getType(), resultGrads[0])};
}

SmallVector<Value> MseLossOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                             ArrayRef<bool> needed) {
  SmallVector<Value> grads(2);
  if (needed[0])
    grads[0] = b.create<MseLossGradOp>(getLoc(), getPredictions().getType(), resultGrads[0],
                                       getPredictions(), getTargets());
  return grads;
}
