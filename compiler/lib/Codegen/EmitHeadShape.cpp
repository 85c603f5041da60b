//===- EmitHeadShape.cpp - pooling tokens, shaping features -------------===//
//
// The ops of BertHeadShapeOps.td and the span head's transpose, for both targets: the
// CUDA launchers take the CPU kernels' arguments and then the stream. Tensors of any rank
// are rows of their last dimension here (EmitContext::rows).
//
//===----------------------------------------------------------------------===//

#include "EmitContext.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// Dimension `i` of `value` as C++: the batch B, the sequence S, or a constant.
std::string dimExpr(Value value, unsigned i) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.isDynamicDim(i))
    return std::to_string(type.getDimSize(i));
  return type.getNumDynamicDims() > 1 && i > 0 ? "S" : "B";
}

/// "B, S, H, index" of a [B, S, H] tensor.
std::string tokenArgs(Value sequence, int64_t index) {
  return "B, S, " + std::to_string(EmitContext::features(sequence)) + ", " + std::to_string(index);
}

/// "B, S, tokens, H" of a flattening between [B, S, H] and [B, tokens * H].
std::string flattenArgs(Value sequence, Value flat) {
  int64_t features = EmitContext::features(sequence);
  return "B, S, " + std::to_string(EmitContext::features(flat) / features) + ", " +
         std::to_string(features);
}

/// sliceColumns(whole, part, rows, whole's width, start, part's width): features
/// [start, start + width) of `whole` into `part`.
void emitSliceColumns(EmitContext &ctx, Value whole, Value part, int64_t start) {
  ctx.os << ctx.call("sliceColumns") << ctx.name(whole) << ", " << ctx.name(part) << ", "
         << EmitContext::rows(whole) << ", " << EmitContext::features(whole) << ", " << start
         << ", " << EmitContext::features(part) << ctx.end();
}

} // namespace

std::optional<LogicalResult> emitHeadShapeOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](SelectTokenOp s) {
        os << ctx.call("selectTokenForward") << ctx.name(s.getInput()) << ", "
           << ctx.name(s.getResult()) << ", " << tokenArgs(s.getInput(), s.getIndex()) << ctx.end();
        return success();
      })
      .Case([&](SelectTokenGradOp s) {
        os << ctx.call("selectTokenBackward") << ctx.name(s.getResultGrad()) << ", "
           << ctx.name(s.getInputGrad()) << ", " << tokenArgs(s.getInputGrad(), s.getIndex())
           << ctx.end();
        return success();
      })
      .Case<MeanTokensOp, MaxTokensOp>([&](auto m) {
        os << ctx.call(isa<MeanTokensOp>(op) ? "meanTokensForward" : "maxTokensForward")
           << ctx.name(m.getInput()) << ", " << ctx.name(m.getMask()) << ", "
           << ctx.name(m.getResult()) << ", B, S, " << EmitContext::features(m.getInput())
           << ctx.end();
        return success();
      })
      .Case([&](MeanTokensGradOp m) {
        os << ctx.call("meanTokensBackward") << ctx.name(m.getResultGrad()) << ", "
           << ctx.name(m.getMask()) << ", " << ctx.name(m.getInputGrad()) << ", B, S, "
           << EmitContext::features(m.getInputGrad()) << ctx.end();
        return success();
      })
      .Case([&](MaxTokensGradOp m) {
        os << ctx.call("maxTokensBackward") << ctx.name(m.getResultGrad()) << ", "
           << ctx.name(m.getInput()) << ", " << ctx.name(m.getMask()) << ", "
           << ctx.name(m.getInputGrad()) << ", B, S, " << EmitContext::features(m.getInputGrad())
           << ctx.end();
        return success();
      })
      .Case([&](ConcatOp c) {
        // Each input into its columns of the result.
        Value result = c.getResult();
        int64_t start = 0;
        for (Value input : c.getInputs()) {
          os << ctx.call("placeColumns") << ctx.name(input) << ", " << ctx.name(result) << ", "
             << EmitContext::rows(input) << ", " << EmitContext::features(input) << ", "
             << EmitContext::features(result) << ", " << start << ctx.end();
          start += EmitContext::features(input);
        }
        return success();
      })
      .Case([&](ConcatGradOp g) {
        emitSliceColumns(ctx, g.getResultGrad(), g.getInputGrad(), g.getStartAttr().getInt());
        return success();
      })
      .Case([&](SliceOp s) {
        emitSliceColumns(ctx, s.getInput(), s.getResult(), s.getStartAttr().getInt());
        return success();
      })
      .Case([&](SliceGradOp g) {
        Value dy = g.getResultGrad(), dx = g.getInputGrad();
        os << ctx.call("padColumns") << ctx.name(dy) << ", " << ctx.name(dx) << ", "
           << EmitContext::rows(dy) << ", " << EmitContext::features(dy) << ", "
           << EmitContext::features(dx) << ", " << g.getStartAttr().getInt() << ctx.end();
        return success();
      })
      .Case([&](FlattenOp f) {
        os << ctx.call("flattenForward") << ctx.name(f.getInput()) << ", "
           << ctx.name(f.getResult()) << ", " << flattenArgs(f.getInput(), f.getResult())
           << ctx.end();
        return success();
      })
      .Case([&](FlattenGradOp f) {
        os << ctx.call("flattenBackward") << ctx.name(f.getResultGrad()) << ", "
           << ctx.name(f.getInputGrad()) << ", " << flattenArgs(f.getInputGrad(), f.getResultGrad())
           << ctx.end();
        return success();
      })
      .Case([&](TransposeOp t) {
        Value in = t.getInput();
        os << ctx.call("transposeLastTwo") << ctx.name(in) << ", " << ctx.name(t.getResult())
           << ", B, " << dimExpr(in, 1) << ", " << dimExpr(in, 2) << ctx.end();
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
