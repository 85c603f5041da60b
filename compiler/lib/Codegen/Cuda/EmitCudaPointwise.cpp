//===- EmitCudaPointwise.cpp - embeddings, norms, activations, dropout ----===//
//
// Everything elementwise or row-wise, and the heads' layout changes.
//
//===----------------------------------------------------------------------===//

#include "CudaEmitters.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// "cuda::fn(a, b, ..., n, dev.stream);" for kernels over every element of `sized`.
void emitElementwise(EmitContext &ctx, StringRef fn, ArrayRef<Value> args, Value sized) {
  ctx.os << "  cuda::" << fn << "(";
  for (Value arg : args)
    ctx.os << ctx.name(arg) << ", ";
  ctx.os << EmitContext::numel(sized) << ", dev.stream);\n";
}

/// "B, S * 64, rate, key, dev.stream);" for dropout over the samples of `sized`.
std::string dropoutArgs(Value sized, float rate, uint32_t stream) {
  return "B, " + EmitContext::sampleSize(sized) + ", " + EmitContext::floatLiteral(rate) +
         ", " + EmitContext::dropoutKey(stream) + ", dev.stream);\n";
}

/// "B, S, H, index, dev.stream);" of a [B, S, H] tensor.
std::string tokenArgs(Value sequence, int64_t index) {
  return "B, S, " + std::to_string(EmitContext::features(sequence)) + ", " +
         std::to_string(index) + ", dev.stream);\n";
}

/// Dimension `i` of `value` as C++: the batch B, the sequence S, or a constant.
std::string dimExpr(Value value, unsigned i) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.isDynamicDim(i))
    return std::to_string(type.getDimSize(i));
  return type.getNumDynamicDims() > 1 && i > 0 ? "S" : "B";
}

/// "mean, rstd" pointers of a LayerNorm's statistics in its workspace, for `rows` rows.
std::string statistics(const std::string &workspace, const std::string &rows) {
  return workspace + ", " + workspace + " + (" + rows + ")";
}

} // namespace

LogicalResult emitCudaPointwiseOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](FillOp fill) {
        os << "  cuda::fillScalar(" << ctx.name(fill.getResult()) << ", "
           << EmitContext::floatLiteral(fill.getValue().convertToFloat()) << ", "
           << (fill.getLossScaled() ? "ctx.lossScale" : "1.0f") << ", dev.stream);\n";
        return success();
      })
      .Case([&](CastOp c) {
        emitElementwise(ctx, "convert", {c.getInput(), c.getResult()}, c.getResult());
        return success();
      })
      .Case([&](EmbeddingOp e) {
        os << "  cuda::embeddingForward(" << ctx.name(e.getIds()) << ", "
           << ctx.name(e.getTable()) << ", " << ctx.name(e.getResult()) << ", "
           << EmitContext::numel(e.getIds()) << ", " << EmitContext::features(e.getResult())
           << ", dev.stream);\n";
        return success();
      })
      .Case([&](EmbeddingGradOp g) {
        auto table = cast<RankedTensorType>(g.getTableGrad().getType());
        os << "  cuda::embeddingBackward(" << ctx.name(g.getIds()) << ", "
           << ctx.name(g.getResultGrad()) << ", " << ctx.name(g.getTableGrad()) << ", "
           << EmitContext::numel(g.getIds()) << ", " << table.getDimSize(0) << ", "
           << table.getDimSize(1) << ", dev.stream);\n";
        return success();
      })
      .Case([&](AddOp add) {
        emitElementwise(ctx, "add", {add.getLhs(), add.getRhs(), add.getResult()},
                        add.getResult());
        return success();
      })
      .Case([&](LayerNormOp ln) -> LogicalResult {
        FailureOr<std::string> workspace = kernelWorkspace(op);
        if (failed(workspace))
          return failure();
        std::string rows = EmitContext::rows(ln.getInput());
        os << "  cuda::layerNormForward(" << ctx.name(ln.getInput()) << ", "
           << ctx.name(ln.getGamma()) << ", " << ctx.name(ln.getBeta()) << ", "
           << ctx.name(ln.getResult()) << ", " << statistics(*workspace, rows) << ", " << rows
           << ", " << EmitContext::features(ln.getInput()) << ", "
           << EmitContext::floatLiteral(ln.getEpsilon().convertToFloat()) << ", dev.stream);\n";
        return success();
      })
      .Case([&](LayerNormGradOp g) -> LogicalResult {
        // The IR recomputes the statistics in the backward (the forward's are not kept).
        FailureOr<std::string> workspace = kernelWorkspace(op);
        if (failed(workspace))
          return failure();
        std::string rows = EmitContext::rows(g.getInput());
        std::string cols = std::to_string(EmitContext::features(g.getInput()));
        os << "  cuda::layerNormStatistics(" << ctx.name(g.getInput()) << ", "
           << statistics(*workspace, rows) << ", " << rows << ", " << cols << ", "
           << EmitContext::floatLiteral(g.getEpsilon().convertToFloat()) << ", dev.stream);\n"
           << "  cuda::layerNormBackward(" << ctx.name(g.getResultGrad()) << ", "
           << ctx.name(g.getInput()) << ", " << ctx.name(g.getGamma()) << ", "
           << statistics(*workspace, rows) << ", " << ctx.name(g.getInputGrad()) << ", "
           << ctx.name(g.getGammaGrad()) << ", " << ctx.name(g.getBetaGrad()) << ", " << rows
           << ", " << cols << ", dev.stream);\n";
        return success();
      })
      .Case([&](GeluOp g) {
        emitElementwise(ctx, "geluForward", {g.getInput(), g.getResult()}, g.getResult());
        return success();
      })
      .Case([&](GeluGradOp g) {
        emitElementwise(ctx, "geluBackward", {g.getResultGrad(), g.getInput(), g.getInputGrad()},
                        g.getInputGrad());
        return success();
      })
      .Case([&](TanhOp t) {
        emitElementwise(ctx, "tanhForward", {t.getInput(), t.getResult()}, t.getResult());
        return success();
      })
      .Case([&](TanhGradOp t) {
        emitElementwise(ctx, "tanhBackward",
                        {t.getResultGrad(), t.getResult(), t.getInputGrad()}, t.getInputGrad());
        return success();
      })
      .Case([&](DropoutOp d) {
        os << "  cuda::dropoutForward(" << ctx.name(d.getInput()) << ", "
           << ctx.name(d.getResult()) << ", "
           << dropoutArgs(d.getResult(), d.getRate().convertToFloat(), d.getStream());
        return success();
      })
      .Case([&](DropoutGradOp d) {
        os << "  cuda::dropoutBackward(" << ctx.name(d.getResultGrad()) << ", "
           << ctx.name(d.getInputGrad()) << ", "
           << dropoutArgs(d.getInputGrad(), d.getRate().convertToFloat(), d.getStream());
        return success();
      })
      .Case([&](SelectTokenOp s) {
        os << "  cuda::selectTokenForward(" << ctx.name(s.getInput()) << ", "
           << ctx.name(s.getResult()) << ", " << tokenArgs(s.getInput(), s.getIndex());
        return success();
      })
      .Case([&](SelectTokenGradOp s) {
        os << "  cuda::selectTokenBackward(" << ctx.name(s.getResultGrad()) << ", "
           << ctx.name(s.getInputGrad()) << ", " << tokenArgs(s.getInputGrad(), s.getIndex());
        return success();
      })
      .Case([&](FlattenOp f) {
        int64_t features = EmitContext::features(f.getInput());
        os << "  cuda::flattenForward(" << ctx.name(f.getInput()) << ", "
           << ctx.name(f.getResult()) << ", B, S, "
           << EmitContext::features(f.getResult()) / features << ", " << features
           << ", dev.stream);\n";
        return success();
      })
      .Case([&](FlattenGradOp f) {
        int64_t features = EmitContext::features(f.getInputGrad());
        os << "  cuda::flattenBackward(" << ctx.name(f.getResultGrad()) << ", "
           << ctx.name(f.getInputGrad()) << ", B, S, "
           << EmitContext::features(f.getResultGrad()) / features << ", " << features
           << ", dev.stream);\n";
        return success();
      })
      .Case([&](TransposeOp t) {
        Value in = t.getInput();
        os << "  cuda::transposeLastTwo(" << ctx.name(in) << ", " << ctx.name(t.getResult())
           << ", B, " << dimExpr(in, 1) << ", " << dimExpr(in, 2) << ", dev.stream);\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

} // namespace bertc
