//===- EmitAttention.cpp - fused attention and its gradient ---------------===//
//
// The CPU kernels work tile by tile in the arena's scratch region. The forward writes
// its output and each query row's log-sum-exp; the backward recomputes the probabilities
// from the scores and that lse, and takes its row term from the forward's output.
//
//===----------------------------------------------------------------------===//

#include "CpuEmitters.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The arguments both attention kernels end with.
std::string shapeAndDropout(Value query, int64_t heads, float dropout, uint32_t stream) {
  return "ctx.scratch, B, S, " + std::to_string(EmitContext::features(query)) + ", " +
         std::to_string(heads) + ", " + EmitContext::floatLiteral(dropout) + ", " +
         EmitContext::dropoutKey(stream) + ");\n";
}

} // namespace

std::optional<LogicalResult> emitAttentionOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](AttentionOp attention) {
        os << "  cpu::attentionForward(" << ctx.name(attention.getQuery()) << ", "
           << ctx.name(attention.getKey()) << ", " << ctx.name(attention.getValue()) << ", "
           << ctx.name(attention.getMask()) << ", " << ctx.name(attention.getResult()) << ", "
           << ctx.name(attention.getLse()) << ", "
           << shapeAndDropout(attention.getQuery(), attention.getHeads(),
                              attention.getDropout().convertToFloat(), attention.getStream());
        return success();
      })
      .Case([&](AttentionGradOp grad) {
        os << "  cpu::attentionBackward(" << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getQuery()) << ", " << ctx.name(grad.getKey()) << ", "
           << ctx.name(grad.getValue()) << ", " << ctx.name(grad.getMask()) << ", "
           << ctx.name(grad.getOutput()) << ", " << ctx.name(grad.getLse()) << ", "
           << ctx.name(grad.getQueryGrad()) << ", " << ctx.name(grad.getKeyGrad()) << ", "
           << ctx.name(grad.getValueGrad()) << ", "
           << shapeAndDropout(grad.getQuery(), grad.getHeads(), grad.getDropout().convertToFloat(),
                              grad.getStream());
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
