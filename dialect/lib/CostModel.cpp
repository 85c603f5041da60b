//===- CostModel.cpp - FLOPs and bytes of the bert ops --------------------===//
//
// CostOpInterface for the ops whose work is not one flop per result element: the
// GEMMs (2·rows·in·out per product), attention (its four batched products, counted
// for the full [seq, seq] score matrix), LayerNorm, GELU and AdamW. Bytes default to
// every operand and result once (see BertInterfaces.td). Sizes at a batch follow the
// dialect's convention: the first dynamic dimension is the batch, the second the seq.
//
//===----------------------------------------------------------------------===//

#include "bert/BertDialect.h"

using namespace mlir;
using namespace mlir::bert;

SmallVector<int64_t> mlir::bert::shapeAt(RankedTensorType type, int64_t batch, int64_t seq) {
  SmallVector<int64_t> shape;
  int dynamicSeen = 0;
  for (int64_t dim : type.getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? (dynamicSeen++ == 0 ? batch : seq) : dim);
  return shape;
}

double mlir::bert::numElementsAt(Type type, int64_t batch, int64_t seq) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped)
    return 0;
  double elements = 1;
  for (int64_t dim : shapeAt(shaped, batch, seq))
    elements *= double(dim);
  return elements;
}

double mlir::bert::bytesAt(Type type, int64_t batch, int64_t seq) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped)
    return 0;
  return numElementsAt(type, batch, seq) * double((shaped.getElementTypeBitWidth() + 7) / 8);
}

namespace {

/// Rows of a [.., features] tensor at (batch, seq): all elements over the last dim.
double rowsAt(Value value, int64_t batch, int64_t seq) {
  auto type = cast<RankedTensorType>(value.getType());
  return numElementsAt(type, batch, seq) / double(type.getShape().back());
}

double features(Value value) {
  return double(cast<RankedTensorType>(value.getType()).getShape().back());
}

/// One [rows, in] x [in, out] product.
double gemmFlops(double rows, double in, double out) { return 2 * rows * in * out; }

/// QK^T and PV for every head: 2 products of batch·seq·seq·hidden multiply-adds.
double attentionProductFlops(Value query, int64_t batch, int64_t seq) {
  return 2 * gemmFlops(double(batch) * double(seq), features(query), double(seq));
}

} // namespace

double LinearOp::estimateFlops(int64_t batch, int64_t seq) {
  double rows = rowsAt(getInput(), batch, seq);
  return gemmFlops(rows, features(getInput()), features(getResult())) +
         rows * features(getResult()); // the bias
}

double LinearGradInputOp::estimateFlops(int64_t batch, int64_t seq) {
  return gemmFlops(rowsAt(getResultGrad(), batch, seq), features(getResultGrad()),
                   features(getInputGrad()));
}

double LinearGradWeightOp::estimateFlops(int64_t batch, int64_t seq) {
  return gemmFlops(rowsAt(getResultGrad(), batch, seq), features(getResultGrad()),
                   features(getInput()));
}

// Scores and the weighted sum, plus about five flops per score for scale, mask and
// softmax.
double AttentionOp::estimateFlops(int64_t batch, int64_t seq) {
  double scores = double(batch) * double(getHeads()) * double(seq) * double(seq);
  return attentionProductFlops(getQuery(), batch, seq) + 5 * scores;
}

// The scores are recomputed (one product), then dV, dP, dQ and dK: five products.
double AttentionGradOp::estimateFlops(int64_t batch, int64_t seq) {
  double scores = double(batch) * double(getHeads()) * double(seq) * double(seq);
  return 2.5 * attentionProductFlops(getQuery(), batch, seq) + 10 * scores;
}

// Mean, variance, normalise, scale and shift: about eight flops per element.
double LayerNormOp::estimateFlops(int64_t batch, int64_t seq) {
  return 8 * numElementsAt(getResult().getType(), batch, seq);
}

double LayerNormGradOp::estimateFlops(int64_t batch, int64_t seq) {
  return 14 * numElementsAt(getInputGrad().getType(), batch, seq);
}

// erf costs about a dozen flops.
double GeluOp::estimateFlops(int64_t batch, int64_t seq) {
  return 16 * numElementsAt(getResult().getType(), batch, seq);
}

double GeluGradOp::estimateFlops(int64_t batch, int64_t seq) {
  return 24 * numElementsAt(getInputGrad().getType(), batch, seq);
}

// Moments, bias corrections, decay and the update: about a dozen flops per element,
// reading and writing the value and both moments and reading the gradient.
double AdamWOp::estimateFlops(int64_t, int64_t) {
  return 12 * double(getParam().getType().getNumElements());
}

// The fp32 value (a 16-bit parameter's master), gradient and moments: four reads and three
// writes of 4 bytes; a 16-bit parameter also writes its working copy.
double AdamWOp::estimateBytes(int64_t, int64_t) {
  auto type = cast<RankedTensorType>(getParam().getType());
  unsigned bits = type.getElementTypeBitWidth();
  double workingCopyBytes = bits < 32 ? double(bits / 8) : 0.0;
  return double(type.getNumElements()) * (7 * 4 + workingCopyBytes);
}

// A transpose moves bytes and computes nothing.
double TransposeOp::estimateFlops(int64_t, int64_t) { return 0; }
