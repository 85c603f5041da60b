//===- EmitAttention.cpp - attention and its gradient ---------------------===//
//
// head_chunk 0: the CPU kernels work tile by tile in the arena's scratch region. The
// forward writes its output and each query row's log-sum-exp; the backward recomputes the
// probabilities from the scores and that lse, and takes its row term from the forward's
// output. head_chunk n > 0: the CUDA trainer's tensor-core structure, n heads at a time
// with their score blocks in the op's kernel workspace (cpu::chunkedAttentionForward).
// heads, kv_heads and causal reach the kernels as one AttentionHeads argument.
//
//===----------------------------------------------------------------------===//

#include "CpuEmitters.h"

#include "bert/BertDialect.h"
#include "bert/Placement.h"
#include "bertc/Analysis/KernelWorkspace.h"
#include "bertc/Analysis/TrainModule.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The arguments both attention kernels end with: the shape (the heads, key/value heads and
/// causal mask of `op`, either attention op) and the dropout.
template <typename AttentionLikeOp> std::string shapeAndDropout(AttentionLikeOp op) {
  return "B, S, " + std::to_string(EmitContext::features(op.getQuery())) + ", " +
         EmitContext::attentionHeads(op.getHeads(), op.getKvHeads(), op.getCausal()) + ", " +
         EmitContext::floatLiteral(op.getDropout().convertToFloat()) + ", " +
         EmitContext::dropoutKey(op.getStream()) + ");\n";
}

/// Bytes of the plan's scratch region before its kernel workspace slot: what the fused
/// CPU kernels may work in.
int64_t attentionScratchRoom(ModuleOp module, bert::PlanAttr plan) {
  bert::ByteRange scratch = plan.getScratch();
  int64_t room = scratch.bytes;
  module.walk([&](Operation *op) {
    if (FailureOr<int64_t> workspace = bert::getWorkspaceOffset(op); succeeded(workspace))
      room = std::min(room, *workspace - scratch.offset);
  });
  return room;
}

/// Where the kernel works: the arena's scratch (fused) or the op's workspace (chunked).
/// Fails for an op marked `tf32` (only cuBLASLt has TF32 math) and for a fused one whose
/// plan holds no scratch for it: a plan read back from a file may be the CUDA trainer's.
FailureOr<std::string> workArea(Operation *op, int64_t headChunk) {
  if (op->hasAttr("tf32"))
    return op->emitOpError("runs in TF32 (--tf32), which only the cuda targets do");
  if (headChunk > 0)
    return kernelWorkspace(op);
  auto module = op->getParentOfType<ModuleOp>();
  FailureOr<bert::PlanAttr> plan = getPlan(module);
  FailureOr<DimBounds> bounds = getDimBounds(module);
  FailureOr<func::FuncOp> microStep = getMicroStep(module);
  if (failed(plan) || failed(bounds) || failed(microStep))
    return failure();
  int64_t needed = cpuAttentionScratchBytes(*microStep, *bounds);
  if (int64_t room = attentionScratchRoom(module, *plan); room < needed)
    return op->emitOpError() << "works in " << needed << " bytes of scratch, and the plan holds "
                             << room
                             << ": it was planned for the CUDA trainer, plan for target cpu";
  return std::string("ctx.scratch");
}

} // namespace

std::optional<LogicalResult> emitAttentionOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](AttentionOp attention) -> LogicalResult {
        int64_t headChunk = attention.getHeadChunk();
        FailureOr<std::string> work = workArea(op, headChunk);
        if (failed(work))
          return failure();
        os << (headChunk > 0 ? "  cpu::chunkedAttentionForward(" : "  cpu::attentionForward(")
           << ctx.name(attention.getQuery()) << ", " << ctx.name(attention.getKey()) << ", "
           << ctx.name(attention.getValue()) << ", " << ctx.name(attention.getMask()) << ", "
           << ctx.name(attention.getResult()) << ", " << ctx.name(attention.getLse()) << ", "
           << *work << ", " << (headChunk > 0 ? std::to_string(headChunk) + ", " : "")
           << shapeAndDropout(attention);
        return success();
      })
      .Case([&](AttentionGradOp grad) -> LogicalResult {
        int64_t headChunk = grad.getHeadChunk();
        FailureOr<std::string> work = workArea(op, headChunk);
        if (failed(work))
          return failure();
        std::string grads = ctx.name(grad.getQueryGrad()) + ", " + ctx.name(grad.getKeyGrad()) +
                            ", " + ctx.name(grad.getValueGrad());
        // The chunked kernel takes its workspace before the gradients and its head chunk
        // after them, as the CUDA one.
        os << (headChunk > 0 ? "  cpu::chunkedAttentionBackward(" : "  cpu::attentionBackward(")
           << ctx.name(grad.getResultGrad()) << ", " << ctx.name(grad.getQuery()) << ", "
           << ctx.name(grad.getKey()) << ", " << ctx.name(grad.getValue()) << ", "
           << ctx.name(grad.getMask()) << ", " << ctx.name(grad.getOutput()) << ", "
           << ctx.name(grad.getLse()) << ", ";
        if (headChunk > 0)
          os << *work << ", " << grads << ", " << headChunk << ", ";
        else
          os << grads << ", " << *work << ", ";
        os << shapeAndDropout(grad);
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
