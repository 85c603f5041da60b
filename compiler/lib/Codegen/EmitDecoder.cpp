//===- EmitDecoder.cpp - RMSNorm, SiLU, mul and rotary embeddings ---------===//
//
// The decoder ops' kernel calls for both targets: the CUDA launchers take the CPU kernels'
// arguments and then the stream, but for the RMSNorm backward, whose CUDA row kernel leaves
// each row's r in the op's kernel workspace for its weight-gradient kernel.
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
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
