//===- EmitPointwise.cpp - embeddings, norms, activations, dropout --------===//
//
// Everything elementwise or row-wise, and the heads' layout changes, for both targets:
// the CUDA launchers take the CPU kernels' arguments and then the stream. Where they
// differ (the loss seed lives on the device; the CUDA LayerNorm keeps its row statistics
// in the op's kernel workspace), the case says so.
//
//===----------------------------------------------------------------------===//

#include "EmitContext.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// "fn(a, b, ..., n" then the end of the call, for kernels over every element of `sized`.
void emitElementwise(EmitContext &ctx, StringRef fn, ArrayRef<Value> args, Value sized) {
  ctx.os << ctx.call(fn);
  for (Value arg : args)
    ctx.os << ctx.name(arg) << ", ";
  ctx.os << EmitContext::numel(sized) << ctx.end();
}

/// "B, S * 64, rate, key" for dropout over the samples of `sized`.
std::string dropoutArgs(Value sized, float rate, uint32_t stream) {
  return "B, " + EmitContext::sampleSize(sized) + ", " + EmitContext::floatLiteral(rate) + ", " +
         EmitContext::dropoutKey(stream);
}

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

/// The CUDA LayerNorm's "mean, rstd, " pointers: its workspace holds `rows` of each.
FailureOr<std::string> cudaStatistics(Operation *op, const std::string &rows) {
  FailureOr<std::string> workspace = kernelWorkspace(op);
  if (failed(workspace))
    return failure();
  return *workspace + ", " + *workspace + " + (" + rows + "), ";
}

} // namespace

std::optional<LogicalResult> emitPointwiseOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  const bool cuda = ctx.target == KernelTarget::Cuda;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](FillOp fill) {
        std::string value = EmitContext::floatLiteral(fill.getValue().convertToFloat());
        std::string scale = fill.getLossScaled() ? "ctx.lossScale" : "1.0f";
        if (cuda)
          os << ctx.call("fillScalar") << ctx.name(fill.getResult()) << ", " << value << ", "
             << scale << ctx.end();
        else
          os << "  *" << ctx.name(fill.getResult()) << " = " << value
             << (fill.getLossScaled() ? " * ctx.lossScale" : "") << ";\n";
        return success();
      })
      .Case([&](CastOp c) {
        emitElementwise(ctx, "convert", {c.getInput(), c.getResult()}, c.getResult());
        return success();
      })
      .Case([&](EmbeddingOp e) {
        os << ctx.call("embeddingForward") << ctx.name(e.getIds()) << ", " << ctx.name(e.getTable())
           << ", " << ctx.name(e.getResult()) << ", " << EmitContext::numel(e.getIds()) << ", "
           << EmitContext::features(e.getResult()) << ctx.end();
        return success();
      })
      .Case([&](EmbeddingGradOp g) {
        auto table = cast<RankedTensorType>(g.getTableGrad().getType());
        os << ctx.call("embeddingBackward") << ctx.name(g.getIds()) << ", "
           << ctx.name(g.getResultGrad()) << ", " << ctx.name(g.getTableGrad()) << ", "
           << EmitContext::numel(g.getIds()) << ", " << table.getDimSize(0) << ", "
           << table.getDimSize(1) << ctx.end();
        return success();
      })
      .Case([&](AddOp add) {
        emitElementwise(ctx, "add", {add.getLhs(), add.getRhs(), add.getResult()}, add.getResult());
        return success();
      })
      .Case([&](LayerNormOp ln) -> LogicalResult {
        std::string rows = EmitContext::rows(ln.getInput());
        FailureOr<std::string> statistics = cuda ? cudaStatistics(op, rows) : std::string();
        if (failed(statistics))
          return failure();
        os << ctx.call("layerNormForward") << ctx.name(ln.getInput()) << ", "
           << ctx.name(ln.getGamma()) << ", " << ctx.name(ln.getBeta()) << ", "
           << ctx.name(ln.getResult()) << ", " << *statistics << rows << ", "
           << EmitContext::features(ln.getInput()) << ", "
           << EmitContext::floatLiteral(ln.getEpsilon().convertToFloat()) << ctx.end();
        return success();
      })
      .Case([&](LayerNormGradOp g) -> LogicalResult {
        std::string rows = EmitContext::rows(g.getInput());
        std::string cols = std::to_string(EmitContext::features(g.getInput()));
        std::string eps = EmitContext::floatLiteral(g.getEpsilon().convertToFloat());
        if (!cuda) {
          os << ctx.call("layerNormBackward") << ctx.name(g.getResultGrad()) << ", "
             << ctx.name(g.getInput()) << ", " << ctx.name(g.getGamma()) << ", "
             << ctx.name(g.getInputGrad()) << ", " << ctx.name(g.getGammaGrad()) << ", "
             << ctx.name(g.getBetaGrad()) << ", " << rows << ", " << cols << ", " << eps
             << ctx.end();
          return success();
        }
        // The IR recomputes the statistics in the backward (the forward's are not kept); the
        // partial sums of dgamma and dbeta follow them in the op's workspace.
        FailureOr<std::string> statistics = cudaStatistics(op, rows);
        FailureOr<std::string> workspace = kernelWorkspace(op);
        if (failed(statistics) || failed(workspace))
          return failure();
        os << ctx.call("layerNormStatistics") << ctx.name(g.getInput()) << ", " << *statistics
           << rows << ", " << cols << ", " << eps << ctx.end() << ctx.call("layerNormBackward")
           << ctx.name(g.getResultGrad()) << ", " << ctx.name(g.getInput()) << ", "
           << ctx.name(g.getGamma()) << ", " << *statistics << ctx.name(g.getInputGrad()) << ", "
           << ctx.name(g.getGammaGrad()) << ", " << ctx.name(g.getBetaGrad()) << ", " << *workspace
           << " + 2 * (" << rows << "), " << rows << ", " << cols << ctx.end();
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
        emitElementwise(ctx, "tanhBackward", {t.getResultGrad(), t.getResult(), t.getInputGrad()},
                        t.getInputGrad());
        return success();
      })
      .Case([&](DropoutOp d) {
        os << ctx.call("dropoutForward") << ctx.name(d.getInput()) << ", "
           << ctx.name(d.getResult()) << ", "
           << dropoutArgs(d.getResult(), d.getRate().convertToFloat(), d.getStream()) << ctx.end();
        return success();
      })
      .Case([&](DropoutGradOp d) {
        os << ctx.call("dropoutBackward") << ctx.name(d.getResultGrad()) << ", "
           << ctx.name(d.getInputGrad()) << ", "
           << dropoutArgs(d.getInputGrad(), d.getRate().convertToFloat(), d.getStream())
           << ctx.end();
        return success();
      })
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
