//===- VerifierChecks.h - the checks the op verifiers share ----*- C++ -*-===//
//
// Each fails with a diagnostic on `op` that names the operand (`what`) and both sizes or
// types, so that a verifier reads as the list of what its op requires.
//
//===----------------------------------------------------------------------===//

#ifndef BERT_VERIFIER_CHECKS_H
#define BERT_VERIFIER_CHECKS_H

#include "bert/BertDialect.h"

namespace mlir::bert::verify {

/// The ranked tensor type of `value`, and the size of its last dimension.
RankedTensorType tensorType(Value value);
int64_t lastDim(Value value);

/// Fails unless `value` has rank `rank`.
LogicalResult expectRank(Operation *op, Value value, StringRef what, int64_t rank);

/// Fails unless the last dimension of `value` is `expected` (dynamic sizes pass).
LogicalResult expectLastDim(Operation *op, Value value, StringRef what, int64_t expected);

/// Fails unless `a` and `b` have the same type.
LogicalResult expectSameType(Operation *op, Value a, StringRef aWhat, Value b, StringRef bWhat);

/// Fails unless `a` and `b` have the same shape (weight gradients are fp32 whatever the
/// storage type of their parameter).
LogicalResult expectSameShape(Operation *op, Value a, StringRef aWhat, Value b, StringRef bWhat);

/// Fails unless an embedding's padding_idx, when given, is a row of `table`.
LogicalResult expectPaddingRow(Operation *op, std::optional<uint64_t> paddingIdx, Value table);

/// Fails unless `rate` (a dropout rate, an Adam beta) is in [0, 1).
LogicalResult expectRate(Operation *op, StringRef what, double rate);

/// Fails unless `param` is produced by a trainable bert.param.
LogicalResult expectTrainableParam(Operation *op, Value param);

/// A layer's shapes: the input's leading dims with the last one replaced by `features`.
LogicalResult expectLinearResult(Operation *op, Value input, Value result, int64_t features);

/// Fails when `op` has `tf32` but its GEMM operand is not fp32: TF32 rounds fp32 inputs.
LogicalResult expectTf32Operand(Operation *op, bool tf32, Value operand);

/// A backward that also sums its input gradient over the rows (a bias gradient): the input
/// gradient of the result gradient's type, and `sum` (named `what`) of rank 1 as wide as
/// its rows.
LogicalResult expectInputGradAndColumnSum(Operation *op, Value resultGrad, Value inputGrad,
                                          Value sum, StringRef what);

/// A weight gradient dy^T x of `weight`'s [out, in] shape (named `what`): dy ends in out, x
/// in in; `tf32` needs fp32 operands.
LogicalResult expectWeightGradient(Operation *op, Value weight, StringRef what, Value resultGrad,
                                   Value input, bool tf32);

} // namespace mlir::bert::verify

#endif // BERT_VERIFIER_CHECKS_H
