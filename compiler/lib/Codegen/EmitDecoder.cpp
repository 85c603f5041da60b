//===- EmitDecoder.cpp - RMSNorm, SiLU, mul and rotary embeddings ---------===//
//
// The decoder ops' kernel calls for both targets: the CUDA launchers take the CPU kernels'
// arguments and then the stream, but for the RMSNorm backward, whose CUDA row kernel leaves
// each row's r in the op's kernel workspace for its weight-gradient kernel, and the LM head
// loss, whose CUDA launchers take the trainer's GEMMs first and queue on their stream.
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
void emitElementwiseCall(EmitContext &ctx, StringRef fn, ArrayRef<Value> args, Value sized) {
  ctx.os << ctx.call(fn);
  for (Value arg : args)
    ctx.os << ctx.name(arg) << ", ";
  ctx.os << EmitContext::numel(sized) << ctx.end();
}

/// `fn(in, positions, out, tokens, heads, headDim, invFreq)` of a rotation of `in` into
/// `out`, the frequencies a static array named after `out`, declared before the call.
void emitRope(EmitContext &ctx, StringRef fn, Value in, Value positions, Value out, int64_t heads,
              ArrayRef<float> invFreq) {
  std::string table = ctx.name(out) + "_inv_freq";
  ctx.os << "  static const float " << table << "[] = {";
  for (auto [index, frequency] : llvm::enumerate(invFreq))
    ctx.os << (index ? ", " : "") << EmitContext::floatLiteral(frequency);
  ctx.os << "};\n"
         << ctx.call(fn) << ctx.name(in) << ", " << ctx.name(positions) << ", " << ctx.name(out)
         << ", " << EmitContext::rows(in) << ", " << heads << ", " << 2 * invFreq.size() << ", "
         << table << ctx.end();
}

/// A call of LM head loss kernel `fn` of `op` (its kernel workspace and token chunk needed),
/// `leading` its arguments before the workspace, `hidden` and `weight` its operands: the
/// sizes and the normalizer follow the workspace.
LogicalResult emitLmHeadLoss(EmitContext &ctx, Operation *op, StringRef fn,
                             ArrayRef<std::string> leading, Value hidden, Value weight,
                             int64_t tokenChunk, float scale) {
  if (tokenChunk <= 0)
    return op->emitOpError("has no token_chunk: run -bertc-lower-to-target");
  FailureOr<std::string> workspace = kernelWorkspace(op);
  if (failed(workspace))
    return failure();
  ctx.os << (ctx.target == KernelTarget::Cuda ? "  cuda::" + fn.str() + "(*dev.gemms, "
                                              : ctx.call(fn));
  for (const std::string &argument : leading)
    ctx.os << argument << ", ";
  ctx.os << *workspace << ", " << EmitContext::rows(hidden) << ", " << EmitContext::features(hidden)
         << ", " << cast<RankedTensorType>(weight.getType()).getShape()[0] << ", " << tokenChunk
         << ", " << lossNormalizer(scale) << ");\n";
  return success();
}

} // namespace

std::optional<LogicalResult> emitDecoderOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](RmsNormOp n) {
        os << ctx.call("rmsNormForward") << ctx.name(n.getInput()) << ", "
           << ctx.name(n.getWeight()) << ", " << ctx.name(n.getResult()) << ", "
           << EmitContext::rows(n.getInput()) << ", " << EmitContext::features(n.getInput()) << ", "
           << EmitContext::floatLiteral(n.getEpsilon().convertToFloat()) << ctx.end();
        return success();
      })
      .Case([&](RmsNormGradOp g) -> LogicalResult {
        std::string rstd;
        if (ctx.target == KernelTarget::Cuda) {
          FailureOr<std::string> workspace = kernelWorkspace(op);
          if (failed(workspace))
            return failure();
          rstd = *workspace + ", ";
        }
        os << ctx.call("rmsNormBackward") << ctx.name(g.getResultGrad()) << ", "
           << ctx.name(g.getInput()) << ", " << ctx.name(g.getWeight()) << ", "
           << ctx.name(g.getInputGrad()) << ", " << ctx.name(g.getWeightGrad()) << ", " << rstd
           << EmitContext::rows(g.getInput()) << ", " << EmitContext::features(g.getInput()) << ", "
           << EmitContext::floatLiteral(g.getEpsilon().convertToFloat()) << ctx.end();
        return success();
      })
      .Case([&](SiluOp s) {
        emitElementwiseCall(ctx, "siluForward", {s.getInput(), s.getResult()}, s.getResult());
        return success();
      })
      .Case([&](SiluGradOp s) {
        emitElementwiseCall(ctx, "siluBackward",
                            {s.getResultGrad(), s.getInput(), s.getInputGrad()}, s.getInputGrad());
        return success();
      })
      .Case([&](MulOp m) {
        emitElementwiseCall(ctx, "mul", {m.getLhs(), m.getRhs(), m.getResult()}, m.getResult());
        return success();
      })
      .Case([&](RopeOp r) {
        emitRope(ctx, "ropeForward", r.getInput(), r.getPositions(), r.getResult(), r.getHeads(),
                 r.getInvFreq());
        return success();
      })
      .Case([&](RopeGradOp r) {
        emitRope(ctx, "ropeBackward", r.getResultGrad(), r.getPositions(), r.getInputGrad(),
                 r.getHeads(), r.getInvFreq());
        return success();
      })
      .Case([&](LmHeadLossOp l) {
        return emitLmHeadLoss(ctx, op, "lmHeadLossForward",
                              {ctx.name(l.getHidden()), ctx.name(l.getWeight()),
                               ctx.name(l.getLabels()), ctx.name(l.getResult())},
                              l.getHidden(), l.getWeight(), l.getTokenChunk(),
                              l.getScale().convertToFloat());
      })
      .Case([&](LmHeadLossGradOp g) {
        Value dweight = g.getWeightGrad();
        return emitLmHeadLoss(
            ctx, op, "lmHeadLossBackward",
            {ctx.name(g.getResultGrad()), ctx.name(g.getHidden()), ctx.name(g.getWeight()),
             ctx.name(g.getLabels()), ctx.name(g.getHiddenGrad()),
             dweight ? ctx.name(dweight) : std::string("nullptr")},
            g.getHidden(), g.getWeight(), g.getTokenChunk(), g.getScale().convertToFloat());
      })
      .Case([&](AccumulateLmHeadLossGradOp g) -> LogicalResult {
        FailureOr<std::string> slot = gradientSlot(op, g.getParam());
        if (failed(slot))
          return failure();
        return emitLmHeadLoss(
            ctx, op, "lmHeadLossBackwardAccumulate",
            {ctx.name(g.getResultGrad()), ctx.name(g.getHidden()), ctx.name(g.getParam()),
             ctx.name(g.getLabels()), ctx.name(g.getHiddenGrad()), *slot},
            g.getHidden(), g.getParam(), g.getTokenChunk(), g.getScale().convertToFloat());
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
