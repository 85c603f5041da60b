//===- HeadShapeOps.cpp - verifiers of BertHeadShapeOps.td ----------------===//
//
// Pooling tokens ([batch, seq, features] -> [batch, features]) and shaping the last
// dimension (concat, slice): the ranks the kernels index by, and features that add up.
//
//===----------------------------------------------------------------------===//

#include "VerifierChecks.h"

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::verify;

/// A pooling op's shapes: `sequence` [batch, seq, features] with its mask [batch, seq],
/// `pooled` [batch, features].
static LogicalResult verifyPooling(Operation *op, Value sequence, StringRef sequenceWhat,
                                   Value mask, Value pooled, StringRef pooledWhat) {
  if (failed(expectRank(op, sequence, sequenceWhat, 3)) ||
      failed(expectRank(op, mask, "mask", 2)) || failed(expectRank(op, pooled, pooledWhat, 2)))
    return failure();
  return expectLastDim(op, pooled, pooledWhat, lastDim(sequence));
}

LogicalResult SelectTokenOp::verify() {
  if (failed(expectRank(*this, getInput(), "input", 3)) ||
      failed(expectRank(*this, getResult(), "result", 2)) ||
      failed(expectLastDim(*this, getResult(), "result", lastDim(getInput()))))
    return failure();
  int64_t seq = tensorType(getInput()).getDimSize(1);
  // Signed: the attribute's accessor is unsigned, which would hide a negative index.
  const int64_t index = getIndexAttr().getInt();
  if (index < 0 || (!ShapedType::isDynamic(seq) && index >= seq))
    return emitOpError() << "token index " << index << " is outside the sequence";
  return success();
}

LogicalResult SelectTokenGradOp::verify() {
  if (failed(expectRank(*this, getResultGrad(), "result gradient", 2)) ||
      failed(expectRank(*this, getInputGrad(), "input gradient", 3)))
    return failure();
  return expectLastDim(*this, getInputGrad(), "input gradient", lastDim(getResultGrad()));
}

LogicalResult MeanTokensOp::verify() {
  return verifyPooling(*this, getInput(), "input", getMask(), getResult(), "result");
}

LogicalResult MeanTokensGradOp::verify() {
  return verifyPooling(*this, getInputGrad(), "input gradient", getMask(), getResultGrad(),
                       "result gradient");
}

/// The row width of a flattened [batch, seq, features] tensor must be a whole number of
/// tokens, at least the input's static sequence length.
static LogicalResult verifyFlattenWidth(Operation *op, Value sequence, Value flat) {
  int64_t features = lastDim(sequence), width = lastDim(flat);
  if (ShapedType::isDynamic(width) || width % features != 0)
    return op->emitOpError() << "flattened width " << width
                             << " is not a whole number of tokens of " << features << " features";
  int64_t seq = tensorType(sequence).getDimSize(1);
  if (!ShapedType::isDynamic(seq) && width / features < seq)
    return op->emitOpError() << "flattened width " << width << " holds " << width / features
                             << " tokens but the sequence has " << seq;
  return success();
}

LogicalResult FlattenOp::verify() {
  if (failed(expectRank(*this, getInput(), "input", 3)) ||
      failed(expectRank(*this, getResult(), "result", 2)))
    return failure();
  return verifyFlattenWidth(*this, getInput(), getResult());
}

LogicalResult FlattenGradOp::verify() {
  if (failed(expectRank(*this, getResultGrad(), "result gradient", 2)) ||
      failed(expectRank(*this, getInputGrad(), "input gradient", 3)))
    return failure();
  return verifyFlattenWidth(*this, getInputGrad(), getResultGrad());
}

LogicalResult MaxTokensOp::verify() {
  return verifyPooling(*this, getInput(), "input", getMask(), getResult(), "result");
}

LogicalResult MaxTokensGradOp::verify() {
  if (failed(expectSameType(*this, getInput(), "input", getInputGrad(), "input gradient")))
    return failure();
  return verifyPooling(*this, getInput(), "input", getMask(), getResultGrad(), "result gradient");
}

/// `part` is features [start, start + its width) of `whole`: the same rank, leading
/// dimensions and element type, and a range inside whole's last dimension.
static LogicalResult verifyFeatureRange(Operation *op, Value whole, StringRef wholeWhat, Value part,
                                        StringRef partWhat, int64_t start) {
  RankedTensorType wholeType = tensorType(whole), partType = tensorType(part);
  if (wholeType.getElementType() != partType.getElementType() ||
      wholeType.getShape().drop_back() != partType.getShape().drop_back())
    return op->emitOpError() << partWhat << " " << part.getType() << " must keep the element "
                             << "type and leading dimensions of " << wholeWhat << " "
                             << whole.getType();
  int64_t width = lastDim(part), wholeWidth = lastDim(whole);
  if (ShapedType::isDynamic(width) || ShapedType::isDynamic(wholeWidth))
    return op->emitOpError() << "needs static feature sizes";
  // Compared without forming start + width, which a huge start would overflow.
  if (start < 0 || width < 1 || start > wholeWidth || width > wholeWidth - start)
    return op->emitOpError() << "features " << width << " from " << start << " are outside the "
                             << wholeWidth << " of " << wholeWhat;
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().size() < 2)
    return emitOpError() << "needs two or more inputs, got " << getInputs().size();
  int64_t start = 0;
  for (Value input : getInputs()) {
    if (failed(verifyFeatureRange(*this, getResult(), "result", input, "input", start)))
      return failure();
    start += lastDim(input);
  }
  return expectLastDim(*this, getResult(), "result", start);
}

LogicalResult ConcatGradOp::verify() {
  // The attribute's accessor is unsigned, which would hide a negative start.
  return verifyFeatureRange(*this, getResultGrad(), "result gradient", getInputGrad(),
                            "input gradient", getStartAttr().getInt());
}

LogicalResult SliceOp::verify() {
  return verifyFeatureRange(*this, getInput(), "input", getResult(), "result",
                            getStartAttr().getInt());
}

LogicalResult SliceGradOp::verify() {
  return verifyFeatureRange(*this, getInputGrad(), "input gradient", getResultGrad(),
                            "result gradient", getStartAttr().getInt());
}
