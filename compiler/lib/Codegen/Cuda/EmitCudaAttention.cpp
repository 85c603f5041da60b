//===- EmitCudaAttention.cpp - fused attention and its gradient -----------===//
//
// The forward keeps its row statistics in the op's kernel workspace. The IR's
// attention_grad keeps neither those nor the forward's output; lowered for this target
// (`recompute_forward`, -bertc-lower-to-target), its launches are the forward again (into
// the workspace: statistics, then the recomputed output) and then the backward from them.
//
//===----------------------------------------------------------------------===//

#include "CudaEmitters.h"

#include "bert/BertDialect.h"
#include "bertc/Analysis/ArenaPacker.h"
#include "bertc/Analysis/KernelWorkspace.h"
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

/// The C++ element type of `value` ("float", "bf16", "fp16").
std::string elementType(Value value) {
  Type type = cast<ShapedType>(value.getType()).getElementType();
  return type.isBF16() ? "bf16" : type.isF16() ? "fp16" : "float";
}

} // namespace

std::optional<LogicalResult> emitCudaAttentionOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](AttentionOp attention) -> LogicalResult {
        FailureOr<std::string> stats = kernelWorkspace(op);
        if (failed(stats))
          return failure();
        os << "  cuda::attentionForward(" << ctx.name(attention.getQuery()) << ", "
           << ctx.name(attention.getKey()) << ", " << ctx.name(attention.getValue()) << ", "
           << ctx.name(attention.getMask()) << ", " << ctx.name(attention.getResult()) << ", "
           << *stats << ", "
           << shapeAndDropout(attention.getQuery(), attention.getHeads(),
                              attention.getDropout().convertToFloat(), attention.getStream());
        return success();
      })
      .Case([&](AttentionGradOp grad) -> LogicalResult {
        if (!grad.getRecomputeForward())
          return grad.emitError("the cuda target's attention backward runs the forward again "
                                "first: lower the step for it "
                                "(-bertc-lower-to-target=\"target=cuda\")");
        FailureOr<std::string> stats = kernelWorkspace(op);
        FailureOr<DimBounds> bounds = getDimBounds(op->getParentOfType<ModuleOp>());
        if (failed(stats) || failed(bounds))
          return failure();
        int64_t contextOffset =
            alignTo(attentionStatsBytes(bounds->maxBatch, grad.getHeads(), bounds->maxSeq),
                    kKernelWorkspaceAlignment);
        std::string type = elementType(grad.getQuery());
        std::string shape = shapeAndDropout(grad.getQuery(), grad.getHeads(),
                                            grad.getDropout().convertToFloat(), grad.getStream());
        os << "  {\n"
           << "    // The forward again: its statistics and output, which the IR did not keep.\n"
           << "    float *stats = " << *stats << ";\n"
           << "    " << type << " *context = reinterpret_cast<" << type
           << " *>(reinterpret_cast<std::byte *>(stats) + " << contextOffset << ");\n"
           << "    cuda::attentionForward(" << ctx.name(grad.getQuery()) << ", "
           << ctx.name(grad.getKey()) << ", " << ctx.name(grad.getValue()) << ", "
           << ctx.name(grad.getMask()) << ", context, stats, " << shape
           << "    cuda::attentionBackward(" << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getQuery()) << ", " << ctx.name(grad.getKey()) << ", "
           << ctx.name(grad.getValue()) << ", " << ctx.name(grad.getMask()) << ", context, stats, "
           << ctx.name(grad.getQueryGrad()) << ", " << ctx.name(grad.getKeyGrad()) << ", "
           << ctx.name(grad.getValueGrad()) << ", " << shape << "  }\n";
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
