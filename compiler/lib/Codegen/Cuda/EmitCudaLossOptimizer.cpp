//===- EmitCudaLossOptimizer.cpp - loss and gradient accumulation ---------===//
//
// Cross-entropy and MSE losses with their gradients, gradient accumulation into the fp32 gradient slots.
// AdamW over every parameter is one launch, written by CudaTrainer.cpp.
//
//===----------------------------------------------------------------------===//

#include "CudaEmitters.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The pointer to a parameter's fp32 gradient slot.
std::string gradientSlot(Value param) {
  auto op = param.getDefiningOp<ParamOp>();
  auto offset = op ? op->getAttrOfType<IntegerAttr>("arena.grad") : IntegerAttr();
  return "reinterpret_cast<float *>(arena + " + std::to_string(offset ? offset.getInt() : -1) +
         ")";
}

/// The classes of cross-entropy logits: their last dimension, or S for the span head.
std::string classes(Value logits) {
  int64_t last = EmitContext::features(logits);
  return ShapedType::isDynamic(last) ? "S" : std::to_string(last);
}

/// The runtime's loss normalizer divided by the loss's scale.
std::string scaledNormalizer(float scale) {
  if (scale == 1.0f)
    return "ctx.lossNormalizer";
  return "(ctx.lossNormalizer / " + EmitContext::floatLiteral(scale) + ")";
}

} // namespace

LogicalResult emitCudaLossOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](CrossEntropyOp ce) {
        os << "  cuda::crossEntropyForward(" << ctx.name(ce.getLogits()) << ", "
           << ctx.name(ce.getLabels()) << ", " << ctx.name(ce.getResult()) << ", "
           << EmitContext::rows(ce.getLogits()) << ", " << classes(ce.getLogits()) << ", "
           << scaledNormalizer(ce.getScale().convertToFloat()) << ", dev.stream);\n";
        return success();
      })
      .Case([&](CrossEntropyGradOp g) {
        os << "  cuda::crossEntropyBackward(" << ctx.name(g.getResultGrad()) << ", "
           << ctx.name(g.getLogits()) << ", " << ctx.name(g.getLabels()) << ", "
           << ctx.name(g.getLogitsGrad()) << ", " << EmitContext::rows(g.getLogits()) << ", "
           << classes(g.getLogits()) << ", "
           << scaledNormalizer(g.getScale().convertToFloat()) << ", dev.stream);\n";
        return success();
      })
      .Case([&](MseLossOp mse) {
        os << "  cuda::mseLossForward(" << ctx.name(mse.getPredictions()) << ", "
           << ctx.name(mse.getTargets()) << ", " << ctx.name(mse.getResult())
           << ", B, ctx.lossNormalizer, dev.stream);\n";
        return success();
      })
      .Case([&](MseLossGradOp g) {
        os << "  cuda::mseLossBackward(" << ctx.name(g.getResultGrad()) << ", "
           << ctx.name(g.getPredictions()) << ", " << ctx.name(g.getTargets()) << ", "
           << ctx.name(g.getPredictionsGrad()) << ", B, ctx.lossNormalizer, dev.stream);\n";
        return success();
      })
      .Case([&](AccumulateGradOp acc) -> LogicalResult {
        if (!acc.getParam().getDefiningOp<ParamOp>()->hasAttr("arena.grad"))
          return acc.emitError("parameter has no gradient slot: run -bertc-plan-buffers");
        os << "  cuda::accumulate(" << ctx.name(acc.getGrad()) << ", "
           << gradientSlot(acc.getParam()) << ", " << EmitContext::numel(acc.getGrad())
           << ", dev.stream);\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

} // namespace bertc
