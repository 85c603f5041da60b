//===- VerifierChecks.cpp - the checks the op verifiers share -------------===//
//
// VerifierChecks.h.
//
//===----------------------------------------------------------------------===//

#include "VerifierChecks.h"

namespace mlir::bert::verify {

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

int64_t lastDim(Value value) { return tensorType(value).getShape().back(); }

/// Fails unless `value` has rank `rank`.
LogicalResult expectRank(Operation *op, Value value, StringRef what, int64_t rank) {
  if (tensorType(value).getRank() == rank)
    return success();
  return op->emitOpError() << what << " must have rank " << rank << ", got " << value.getType();
}

/// Fails unless the last dimension of `value` is `expected` (dynamic sizes pass).
LogicalResult expectLastDim(Operation *op, Value value, StringRef what, int64_t expected) {
  int64_t actual = lastDim(value);
  if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(expected) || actual == expected)
    return success();
  return op->emitOpError() << what << " has last dimension " << actual << ", expected " << expected;
}

LogicalResult expectPaddingRow(Operation *op, std::optional<uint64_t> paddingIdx, Value table) {
  // The attribute is signless: a "-1" reads as 2^64 - 1 and fails too.
  int64_t rows = tensorType(table).getDimSize(0);
  if (!paddingIdx || ShapedType::isDynamic(rows) || *paddingIdx < uint64_t(rows))
    return success();
  return op->emitOpError() << "padding_idx " << int64_t(*paddingIdx) << " is not a row of the "
                           << rows << "-row table";
}

/// Fails unless `a` and `b` have the same type.
LogicalResult expectSameType(Operation *op, Value a, StringRef aWhat, Value b, StringRef bWhat) {
  if (a.getType() == b.getType())
    return success();
  return op->emitOpError() << aWhat << " " << a.getType() << " and " << bWhat << " " << b.getType()
                           << " must have the same type";
}

/// Fails unless `a` and `b` have the same shape (weight gradients are fp32 whatever the
/// storage type of their parameter).
LogicalResult expectSameShape(Operation *op, Value a, StringRef aWhat, Value b, StringRef bWhat) {
  if (tensorType(a).getShape() == tensorType(b).getShape())
    return success();
  return op->emitOpError() << aWhat << " " << a.getType() << " and " << bWhat << " " << b.getType()
                           << " must have the same shape";
}

LogicalResult expectRate(Operation *op, StringRef what, double rate) {
  if (rate >= 0.0 && rate < 1.0)
    return success();
  return op->emitOpError() << what << " must be in [0, 1), got " << rate;
}

LogicalResult expectInputGradAndColumnSum(Operation *op, Value resultGrad, Value inputGrad,
                                          Value sum, StringRef what) {
  if (failed(expectSameType(op, resultGrad, "result gradient", inputGrad, "input gradient")) ||
      failed(expectRank(op, sum, what, 1)))
    return failure();
  return expectLastDim(op, inputGrad, "input gradient", lastDim(sum));
}

/// Fails unless `param` is produced by a trainable bert.param.
LogicalResult expectTrainableParam(Operation *op, Value param) {
  auto def = param.getDefiningOp<ParamOp>();
  if (!def)
    return op->emitOpError("operand must be a bert.param");
  if (!def.getTrainable())
    return op->emitOpError() << "parameter '" << def.getName() << "' is frozen";
  return success();
}

/// A layer's shapes: the input's leading dims with the last one replaced by `features`.
LogicalResult expectLinearResult(Operation *op, Value input, Value result, int64_t features) {
  auto in = tensorType(input).getShape();
  auto out = tensorType(result).getShape();
  if (in.size() != out.size() || in.drop_back() != out.drop_back())
    return op->emitOpError() << "result " << result.getType()
                             << " must keep the leading dimensions of " << input.getType();
  return expectLastDim(op, result, "result", features);
}

/// Fails when `op` has `tf32` but its GEMM operand is not fp32: TF32 rounds fp32 inputs.
LogicalResult expectTf32Operand(Operation *op, bool tf32, Value operand) {
  if (!tf32 || tensorType(operand).getElementType().isF32())
    return success();
  return op->emitOpError() << "has tf32 but its operands are "
                           << tensorType(operand).getElementType() << ", not f32";
}

/// A weight gradient dy^T x of `weight`'s [out, in] shape (named `what`): dy ends in out, x
/// in in; `tf32` needs fp32 operands.
LogicalResult expectWeightGradient(Operation *op, Value weight, StringRef what, Value resultGrad,
                                   Value input, bool tf32) {
  if (failed(expectRank(op, weight, what, 2)))
    return failure();
  auto shape = tensorType(weight).getShape();
  if (failed(expectLastDim(op, resultGrad, "result gradient", shape[0])) ||
      failed(expectLastDim(op, input, "input", shape[1])))
    return failure();
  return expectTf32Operand(op, tf32, input);
}

} // namespace mlir::bert::verify
