//===- BertOps.cpp - verifiers of the bert dialect's ops ------------------===//
//
// Each verifier checks what the kernels rely on: ranks, the feature dimensions that
// must agree between activations and parameters, and attribute ranges. A diagnostic
// names the operand and both sizes (VerifierChecks.h). The parameter updates' verifiers
// are in ParameterUpdateOps.cpp, the token pooling and feature shaping ops' in
// HeadShapeOps.cpp, attention's in AttentionOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "VerifierChecks.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::verify;

LogicalResult InputOp::verify() {
  int64_t rank = llvm::StringSwitch<int64_t>(getName())
                     .Cases("input_ids", "token_type_ids", "position_ids", "attention_mask", 2)
                     .Case("labels", 1)
                     .Default(-1);
  if (rank < 0)
    return emitOpError() << "unknown input '" << getName()
                         << "' (expected input_ids, token_type_ids, position_ids, "
                            "attention_mask or labels)";
  bool isFloat = tensorType(getResult()).getElementType().isF32();
  if (getName() != "labels") {
    if (isFloat)
      return emitOpError() << "input '" << getName() << "' must be int32";
    return expectRank(*this, getResult(), "input '" + getName().str() + "'", rank);
  }
  // Classes or regression targets per row; span positions or token classes per row and
  // position (int32 only).
  int64_t labelRank = tensorType(getResult()).getRank();
  if (labelRank == 1 || (labelRank == 2 && !isFloat))
    return success();
  return emitOpError() << "labels must be [batch] (int32 or f32) or [batch, n] int32, got "
                       << getResult().getType();
}

RankedTensorType ParamOp::getValueType() {
  if (QuantizedWeightAttr quantized = getQuantizedAttr())
    return RankedTensorType::get(quantized.getShape(), Float32Type::get(getContext()));
  return getResult().getType();
}

LogicalResult ParamOp::verify() {
  if (!getResult().getType().hasStaticShape())
    return emitOpError() << "parameter '" << getName() << "' must have a static shape";
  bool bytes = getResult().getType().getElementType().isInteger(8);
  if (QuantizedWeightAttr quantized = getQuantizedAttr()) {
    if (getTrainable())
      return emitOpError() << "parameter '" << getName() << "': a quantized weight is frozen";
    if (!bytes || getResult().getType().getRank() != 1 ||
        getResult().getType().getNumElements() != quantized.getBytes())
      return emitOpError() << "parameter '" << getName() << "': a " << quantized
                           << " weight is a tensor<" << quantized.getBytes() << "xi8>, got "
                           << getResult().getType();
  } else if (bytes) {
    return emitOpError() << "parameter '" << getName()
                         << "': only a quantized weight is held as bytes";
  }
  if (!llvm::is_contained({"normal", "zeros", "ones", "kaiming_uniform"}, getInit()))
    return emitOpError() << "init must be normal, zeros, ones or kaiming_uniform, got '"
                         << getInit() << "'";
  if (getCheckpointTransposed() && getValueType().getRank() != 2)
    return emitOpError() << "parameter '" << getName()
                         << "': only a matrix can be checkpoint_transposed";
  if (FloatAttr scale = getInitScaleAttr()) {
    if (getInit() != "normal")
      return emitOpError() << "parameter '" << getName() << "': init_scale needs init = normal";
    double value = scale.getValueAsDouble();
    if (!(value > 0.0) || !std::isfinite(value))
      return emitOpError() << "parameter '" << getName() << "': init_scale must be positive";
  }
  return success();
}

LogicalResult EmbeddingOp::verify() {
  auto ids = tensorType(getIds()), result = tensorType(getResult());
  if (failed(expectRank(*this, getTable(), "table", 2)) ||
      failed(expectRank(*this, getResult(), "result", ids.getRank() + 1)))
    return failure();
  if (result.getShape().drop_back() != ids.getShape())
    return emitOpError() << "result " << result << " must have the shape of ids " << ids
                         << " plus the embedding dimension";
  if (result.getElementType() != getTable().getType().getElementType())
    return emitOpError("result and table must have the same element type");
  if (failed(expectPaddingRow(*this, getPaddingIdx(), getTable())))
    return failure();
  return expectLastDim(*this, getResult(), "result", lastDim(getTable()));
}

LogicalResult AddOp::verify() { return success(); }

LogicalResult CastOp::verify() {
  return expectSameShape(*this, getInput(), "input", getResult(), "result");
}

LogicalResult LayerNormOp::verify() {
  int64_t features = lastDim(getInput());
  if (failed(expectRank(*this, getGamma(), "gamma", 1)) ||
      failed(expectRank(*this, getBeta(), "beta", 1)) ||
      failed(expectLastDim(*this, getGamma(), "gamma", features)) ||
      failed(expectLastDim(*this, getBeta(), "beta", features)) ||
      failed(expectSameType(*this, getInput(), "input", getResult(), "result")))
    return failure();
  if (getEpsilon().convertToFloat() <= 0.0f)
    return emitOpError("epsilon must be positive");
  return success();
}

LogicalResult LinearOp::verify() {
  Value bias = getBias();
  if (failed(expectRank(*this, getWeight(), "weight", 2)) ||
      (bias && failed(expectRank(*this, bias, "bias", 1))))
    return failure();
  auto weight = tensorType(getWeight()).getShape();
  if (failed(expectLastDim(*this, getInput(), "input", weight[1])) ||
      (bias && failed(expectLastDim(*this, bias, "bias", weight[0]))) ||
      failed(expectTf32Operand(*this, getTf32(), getInput())))
    return failure();
  return expectLinearResult(*this, getInput(), getResult(), weight[0]);
}

LogicalResult GeluOp::verify() { return success(); }
LogicalResult TanhOp::verify() { return success(); }

LogicalResult ReluOp::verify() { return success(); }

LogicalResult DropoutOp::verify() { return expectRate(*this, "rate", getRate().convertToFloat()); }

/// Logits [batch, classes] with labels [batch], or [batch, n, classes] with [batch, n];
/// a positive scale.
static LogicalResult verifyCrossEntropy(Operation *op, Value logits, Value labels, float scale) {
  int64_t rank = tensorType(logits).getRank();
  if (rank != 2 && rank != 3)
    return op->emitOpError() << "logits must have rank 2 or 3, got " << logits.getType();
  if (failed(expectRank(op, labels, "labels", rank - 1)))
    return failure();
  if (!(scale > 0.0f))
    return op->emitOpError() << "scale must be positive, got " << scale;
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  return verifyCrossEntropy(*this, getLogits(), getLabels(), getScale().convertToFloat());
}

LogicalResult EmbeddingGradOp::verify() {
  if (failed(expectRank(*this, getTableGrad(), "table gradient", 2)) ||
      failed(expectPaddingRow(*this, getPaddingIdx(), getTableGrad())))
    return failure();
  return expectLastDim(*this, getResultGrad(), "result gradient", lastDim(getTableGrad()));
}

LogicalResult LayerNormGradOp::verify() {
  if (failed(expectSameType(*this, getResultGrad(), "result gradient", getInput(), "input")) ||
      failed(expectSameType(*this, getInput(), "input", getInputGrad(), "input gradient")) ||
      failed(expectSameShape(*this, getGamma(), "gamma", getGammaGrad(), "gamma gradient")) ||
      failed(expectSameShape(*this, getGamma(), "gamma", getBetaGrad(), "beta gradient")))
    return failure();
  return expectLastDim(*this, getGamma(), "gamma", lastDim(getInput()));
}

LogicalResult AddLayerNormOp::verify() {
  int64_t features = lastDim(getLhs());
  if (failed(expectSameType(*this, getLhs(), "lhs", getRhs(), "rhs")) ||
      failed(expectSameType(*this, getLhs(), "lhs", getSum(), "sum")) ||
      failed(expectSameType(*this, getSum(), "sum", getOutput(), "output")) ||
      failed(expectRank(*this, getGamma(), "gamma", 1)) ||
      failed(expectLastDim(*this, getGamma(), "gamma", features)) ||
      failed(expectSameShape(*this, getGamma(), "gamma", getBeta(), "beta")))
    return failure();
  if (getEpsilon().convertToFloat() <= 0.0f)
    return emitOpError("epsilon must be positive");
  return expectRate(*this, "dropout", getDropout().convertToFloat());
}

LogicalResult LinearGradInputOp::verify() {
  if (failed(expectRank(*this, getWeight(), "weight", 2)))
    return failure();
  auto weight = tensorType(getWeight()).getShape();
  if (failed(expectLastDim(*this, getResultGrad(), "result gradient", weight[0])) ||
      failed(expectTf32Operand(*this, getTf32(), getResultGrad())))
    return failure();
  return expectLinearResult(*this, getResultGrad(), getInputGrad(), weight[1]);
}

LogicalResult LinearGradInputAddOp::verify() {
  if (failed(expectRank(*this, getWeight(), "weight", 2)))
    return failure();
  auto weight = tensorType(getWeight()).getShape();
  if (failed(expectLastDim(*this, getResultGrad(), "result gradient", weight[0])) ||
      failed(expectTf32Operand(*this, getTf32(), getResultGrad())) ||
      failed(expectSameType(*this, getInputGrad(), "input gradient", getAddend(), "addend")))
    return failure();
  return expectLinearResult(*this, getResultGrad(), getInputGrad(), weight[1]);
}

LogicalResult LinearGradWeightOp::verify() {
  return expectWeightGradient(*this, getWeightGrad(), "weight gradient", getResultGrad(),
                              getInput(), getTf32());
}

LogicalResult BiasGradOp::verify() {
  if (failed(expectRank(*this, getBiasGrad(), "bias gradient", 1)))
    return failure();
  return expectLastDim(*this, getResultGrad(), "result gradient", lastDim(getBiasGrad()));
}

LogicalResult GeluGradOp::verify() {
  return expectSameType(*this, getResultGrad(), "result gradient", getInputGrad(),
                        "input gradient");
}

LogicalResult TanhGradOp::verify() {
  return expectSameType(*this, getResultGrad(), "result gradient", getInputGrad(),
                        "input gradient");
}

LogicalResult ReluGradOp::verify() {
  return expectSameType(*this, getResultGrad(), "result gradient", getInputGrad(),
                        "input gradient");
}

LogicalResult DropoutGradOp::verify() {
  return expectRate(*this, "rate", getRate().convertToFloat());
}

LogicalResult GeluGradBiasOp::verify() {
  if (failed(expectInputGradAndColumnSum(*this, getResultGrad(), getInputGrad(), getBiasGrad(),
                                         "bias gradient")))
    return failure();
  return expectSameType(*this, getInput(), "input", getInputGrad(), "input gradient");
}

LogicalResult DropoutGradBiasOp::verify() {
  if (failed(expectInputGradAndColumnSum(*this, getResultGrad(), getInputGrad(), getBiasGrad(),
                                         "bias gradient")))
    return failure();
  return expectRate(*this, "rate", getRate().convertToFloat());
}

LogicalResult CrossEntropyGradOp::verify() {
  if (failed(verifyCrossEntropy(*this, getLogits(), getLabels(), getScale().convertToFloat())))
    return failure();
  return expectSameType(*this, getLogits(), "logits", getLogitsGrad(), "logits gradient");
}

LogicalResult TransposeOp::verify() {
  if (failed(expectRank(*this, getInput(), "input", 3)) ||
      failed(expectRank(*this, getResult(), "result", 3)))
    return failure();
  auto in = tensorType(getInput()).getShape(), out = tensorType(getResult()).getShape();
  if (in[0] != out[0] || in[1] != out[2] || in[2] != out[1])
    return emitOpError() << "result " << getResult().getType() << " must be the input "
                         << getInput().getType() << " with its last two dimensions swapped";
  return success();
}

/// Predictions [batch, 1] and targets [batch].
static LogicalResult verifyMseLoss(Operation *op, Value predictions, Value targets) {
  if (failed(expectRank(op, predictions, "predictions", 2)) ||
      failed(expectLastDim(op, predictions, "predictions", 1)) ||
      failed(expectRank(op, targets, "targets", 1)))
    return failure();
  return success();
}

LogicalResult MseLossOp::verify() { return verifyMseLoss(*this, getPredictions(), getTargets()); }

LogicalResult MseLossGradOp::verify() {
  if (failed(verifyMseLoss(*this, getPredictions(), getTargets())))
    return failure();
  return expectSameType(*this, getPredictions(), "predictions", getPredictionsGrad(),
                        "predictions gradient");
}

// Both summands are read at the index the sum is written to.
SmallVector<unsigned> AddOp::getReusableOperands() { return {0, 1}; }
SmallVector<unsigned> AddLayerNormOp::getReusableOperands() { return {0, 1}; }
SmallVector<unsigned> LinearGradInputAddOp::getReusableOperands() { return {2}; }

#define GET_OP_CLASSES
#include "bert/BertOps.cpp.inc"
