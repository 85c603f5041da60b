//===- EmitCudaAttention.cpp - attention and its gradient -----------------===//
//
// The forward writes its output and each query row's log-sum-exp (an activation the
// backward reads); the backward takes the forward's output for its row term, which it
// keeps in the op's kernel workspace (with the dropout mask the fused backward's two
// kernels share), and never runs the forward again. head_chunk 0 is the fused kernels
// (cuda_kernels.h), n > 0 the tensor-core GEMMs over n heads at a time, whose score blocks
// are in the same workspace (cuda_chunked_attention.h), in TF32 for an fp32 op marked
// `tf32`. heads, kv_heads and causal reach the kernels as one AttentionHeads argument.
//
//===----------------------------------------------------------------------===//

#include "CudaEmitters.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The arguments both attention launchers end with: the chunked ones' head chunk first, the
/// shape (the heads, key/value heads and causal mask of `op`, either attention op), the
/// dropout, and the stream for the fused ones (the chunked ones queue on the GEMMs' stream,
/// with TF32 math for an op marked `tf32`).
template <typename AttentionLikeOp> std::string shapeAndDropout(AttentionLikeOp op) {
  int64_t headChunk = op.getHeadChunk();
  std::string end = headChunk == 0 ? ", dev.stream);\n"
                    : op.getTf32() ? ", cuda::GemmMath::Tf32);\n"
                                   : ");\n";
  return (headChunk > 0 ? std::to_string(headChunk) + ", " : "") + "B, S, " +
         std::to_string(EmitContext::features(op.getQuery())) + ", " +
         EmitContext::attentionHeads(op.getHeads(), op.getKvHeads(), op.getCausal()) + ", " +
         EmitContext::floatLiteral(op.getDropout().convertToFloat()) + ", " +
         EmitContext::dropoutKey(op.getStream()) + end;
}

/// The launcher's name and, for the chunked kernels, the GEMMs they run on.
std::string launcher(StringRef fused, StringRef chunked, int64_t headChunk) {
  return headChunk > 0 ? ("  cuda::" + chunked + "(*dev.gemms, ").str()
                       : ("  cuda::" + fused + "(").str();
}

} // namespace

std::optional<LogicalResult> emitCudaAttentionOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](AttentionOp attention) -> LogicalResult {
        int64_t headChunk = attention.getHeadChunk();
        os << launcher("attentionForward", "chunkedAttentionForward", headChunk)
           << ctx.name(attention.getQuery()) << ", " << ctx.name(attention.getKey()) << ", "
           << ctx.name(attention.getValue()) << ", " << ctx.name(attention.getMask()) << ", "
           << ctx.name(attention.getResult()) << ", " << ctx.name(attention.getLse()) << ", ";
        if (headChunk > 0) {
          FailureOr<std::string> scores = kernelWorkspace(op);
          if (failed(scores))
            return failure();
          os << *scores << ", ";
        }
        os << shapeAndDropout(attention);
        return success();
      })
      .Case([&](AttentionGradOp grad) -> LogicalResult {
        FailureOr<std::string> workspace = kernelWorkspace(op);
        if (failed(workspace))
          return failure();
        int64_t headChunk = grad.getHeadChunk();
        os << launcher("attentionBackward", "chunkedAttentionBackward", headChunk)
           << ctx.name(grad.getResultGrad()) << ", " << ctx.name(grad.getQuery()) << ", "
           << ctx.name(grad.getKey()) << ", " << ctx.name(grad.getValue()) << ", "
           << ctx.name(grad.getMask()) << ", " << ctx.name(grad.getOutput()) << ", "
           << ctx.name(grad.getLse()) << ", " << *workspace << ", " << ctx.name(grad.getQueryGrad())
           << ", " << ctx.name(grad.getKeyGrad()) << ", " << ctx.name(grad.getValueGrad()) << ", "
           << shapeAndDropout(grad);
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
