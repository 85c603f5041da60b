//===- EmitCudaAttention.cpp - fused attention and its gradient -----------===//
//
// The forward writes its output and each query row's log-sum-exp (an activation the
// backward reads); the backward takes the forward's output for its row term, which it
// keeps in the op's kernel workspace, and never runs the forward again.
//
//===----------------------------------------------------------------------===//

#include "CudaEmitters.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The arguments both attention launchers end with.
std::string shapeAndDropout(Value query, int64_t heads, float dropout, uint32_t stream) {
  return "B, S, " + std::to_string(EmitContext::features(query)) + ", " + std::to_string(heads) +
         ", " + EmitContext::floatLiteral(dropout) + ", " + EmitContext::dropoutKey(stream) +
         ", dev.stream);\n";
}

} // namespace

std::optional<LogicalResult> emitCudaAttentionOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](AttentionOp attention) -> LogicalResult {
        os << "  cuda::attentionForward(" << ctx.name(attention.getQuery()) << ", "
           << ctx.name(attention.getKey()) << ", " << ctx.name(attention.getValue()) << ", "
           << ctx.name(attention.getMask()) << ", " << ctx.name(attention.getResult()) << ", "
           << ctx.name(attention.getLse()) << ", "
           << shapeAndDropout(attention.getQuery(), attention.getHeads(),
                              attention.getDropout().convertToFloat(), attention.getStream());
        return success();
      })
      .Case([&](AttentionGradOp grad) -> LogicalResult {
        FailureOr<std::string> rowTerm = kernelWorkspace(op);
        if (failed(rowTerm))
          return failure();
        os << "  cuda::attentionBackward(" << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getQuery()) << ", " << ctx.name(grad.getKey()) << ", "
           << ctx.name(grad.getValue()) << ", " << ctx.name(grad.getMask()) << ", "
           << ctx.name(grad.getOutput()) << ", " << ctx.name(grad.getLse()) << ", " << *rowTerm
           << ", " << ctx.name(grad.getQueryGrad()) << ", " << ctx.name(grad.getKeyGrad()) << ", "
           << ctx.name(grad.getValueGrad()) << ", "
           << shapeAndDropout(grad.getQuery(), grad.getHeads(), grad.getDropout().convertToFloat(),
                              grad.getStream());
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
