//===- EmitCudaAttention.cpp - attention and its gradient -----------------===//
//
// The forward writes its output and each query row's log-sum-exp (an activation the
// backward reads); the backward takes the forward's output for its row term, which it
// keeps in the op's kernel workspace (with the dropout mask the fused backward's two
// kernels share), and never runs the forward again. head_chunk 0 is the fused kernels
// (cuda_kernels.h), n > 0 the tensor-core GEMMs over n heads at a time, whose score blocks
// are in the same workspace (cuda_chunked_attention.h), in TF32 for an fp32 op marked
// `tf32`.
//
//===----------------------------------------------------------------------===//

#include "CudaEmitters.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The arguments both attention launchers end with: the chunked ones' head chunk first,
/// and the stream for the fused ones (the chunked ones queue on the GEMMs' stream, with
/// TF32 math for an op marked `tf32`).
std::string shapeAndDropout(Value query, int64_t heads, float dropout, uint32_t stream,
                            int64_t headChunk, bool tf32) {
  std::string end = headChunk == 0 ? ", dev.stream);\n"
                    : tf32         ? ", cuda::GemmMath::Tf32);\n"
                                   : ");\n";
  return (headChunk > 0 ? std::to_string(headChunk) + ", " : "") + "B, S, " +
         std::to_string(EmitContext::features(query)) + ", " + std::to_string(heads) + ", " +
         EmitContext::floatLiteral(dropout) + ", " + EmitContext::dropoutKey(stream) + end;
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
        os << shapeAndDropout(attention.getQuery(), attention.getHeads(),
                              attention.getDropout().convertToFloat(), attention.getStream(),
                              headChunk, attention.getTf32());
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
           << shapeAndDropout(grad.getQuery(), grad.getHeads(), grad.getDropout().convertToFloat(),
                              grad.getStream(), headChunk, grad.getTf32());
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
