//===- EmitPointwise.cpp - embeddings, norms, activations, dropout --------===//

#include "EmitContext.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// "fn(a, b, ..., n);" for kernels over every element of `sized`.
void emitElementwise(EmitContext &ctx, StringRef fn, ArrayRef<Value> args, Value sized) {
  ctx.os << "  cpu::" << fn << "(";
  for (Value arg : args)
    ctx.os << ctx.name(arg) << ", ";
  ctx.os << EmitContext::numel(sized) << ");\n";
}

/// "B, S * 64, rate, key);" for dropout over the samples of `sized`.
std::string dropoutArgs(Value sized, float rate, uint32_t stream) {
  return "B, " + EmitContext::sampleSize(sized) + ", " + EmitContext::floatLiteral(rate) +
         ", " + EmitContext::dropoutKey(stream) + ");\n";
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
  return "B, S, " + std::to_string(EmitContext::features(sequence)) + ", " +
         std::to_string(index) + ");\n";
}

} // namespace

LogicalResult emitPointwiseOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](FillOp fill) {
        os << "  *" << ctx.name(fill.getResult()) << " = "
           << EmitContext::floatLiteral(fill.getValue().convertToFloat())
           << (fill.getLossScaled() ? " * ctx.lossScale" : "") << ";\n";
        return success();
      })
      .Case([&](CastOp c) {
        emitElementwise(ctx, "convert", {c.getInput(), c.getResult()}, c.getResult());
        return success();
      })
      .Case([&](EmbeddingOp e) {
        os << "  cpu::embeddingForward(" << ctx.name(e.getIds()) << ", "
           << ctx.name(e.getTable()) << ", " << ctx.name(e.getResult()) << ", "
           << EmitContext::numel(e.getIds()) << ", " << EmitContext::features(e.getResult())
           << ");\n";
        return success();
      })
      .Case([&](EmbeddingGradOp g) {
        auto table = cast<RankedTensorType>(g.getTableGrad().getType());
        os << "  cpu::embeddingBackward(" << ctx.name(g.getIds()) << ", "
           << ctx.name(g.getResultGrad()) << ", " << ctx.name(g.getTableGrad()) << ", "
           << EmitContext::numel(g.getIds()) << ", " << table.getDimSize(0) << ", "
           << table.getDimSize(1) << ");\n";
        return success();
      })
      .Case([&](AddOp add) {
        emitElementwise(ctx, "add", {add.getLhs(), add.getRhs(), add.getResult()},
                        add.getResult());
        return success();
      })
      .Case([&](LayerNormOp ln) {
        os << "  cpu::layerNormForward(" << ctx.name(ln.getInput()) << ", "
           << ctx.name(ln.getGamma()) << ", " << ctx.name(ln.getBeta()) << ", "
           << ctx.name(ln.getResult()) << ", " << EmitContext::rows(ln.getInput()) << ", "
           << EmitContext::features(ln.getInput()) << ", "
           << EmitContext::floatLiteral(ln.getEpsilon().convertToFloat()) << ");\n";
        return success();
      })
      .Case([&](LayerNormGradOp g) {
        os << "  cpu::layerNormBackward(" << ctx.name(g.getResultGrad()) << ", "
           << ctx.name(g.getInput()) << ", " << ctx.name(g.getGamma()) << ", "
           << ctx.name(g.getInputGrad()) << ", " << ctx.name(g.getGammaGrad()) << ", "
           << ctx.name(g.getBetaGrad()) << ", " << EmitContext::rows(g.getInput()) << ", "
           << EmitContext::features(g.getInput()) << ", "
           << EmitContext::floatLiteral(g.getEpsilon().convertToFloat()) << ");\n";
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
        os << "  cpu::dropoutForward(" << ctx.name(d.getInput()) << ", "
           << ctx.name(d.getResult()) << ", "
           << dropoutArgs(d.getResult(), d.getRate().convertToFloat(), d.getStream());
        return success();
      })
      .Case([&](DropoutGradOp d) {
        os << "  cpu::dropoutBackward(" << ctx.name(d.getResultGrad()) << ", "
           << ctx.name(d.getInputGrad()) << ", "
           << dropoutArgs(d.getInputGrad(), d.getRate().convertToFloat(), d.getStream());
        return success();
      })
      .Case([&](SelectTokenOp s) {
        os << "  cpu::selectTokenForward(" << ctx.name(s.getInput()) << ", "
           << ctx.name(s.getResult()) << ", " << tokenArgs(s.getInput(), s.getIndex());
        return success();
      })
      .Case([&](SelectTokenGradOp s) {
        os << "  cpu::selectTokenBackward(" << ctx.name(s.getResultGrad()) << ", "
           << ctx.name(s.getInputGrad()) << ", " << tokenArgs(s.getInputGrad(), s.getIndex());
        return success();
      })
      .Case([&](FlattenOp f) {
        int64_t features = EmitContext::features(f.getInput());
        os << "  cpu::flattenForward(" << ctx.name(f.getInput()) << ", "
           << ctx.name(f.getResult()) << ", B, S, "
           << EmitContext::features(f.getResult()) / features << ", " << features << ");\n";
        return success();
      })
      .Case([&](FlattenGradOp f) {
        int64_t features = EmitContext::features(f.getInputGrad());
        os << "  cpu::flattenBackward(" << ctx.name(f.getResultGrad()) << ", "
           << ctx.name(f.getInputGrad()) << ", B, S, "
           << EmitContext::features(f.getResultGrad()) / features << ", " << features
           << ");\n";
        return success();
      })
      .Case([&](TransposeOp t) {
        Value in = t.getInput();
        os << "  cpu::transposeLastTwo(" << ctx.name(in) << ", " << ctx.name(t.getResult())
           << ", B, " << dimExpr(in, 1) << ", " << dimExpr(in, 2) << ");\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

} // namespace bertc
