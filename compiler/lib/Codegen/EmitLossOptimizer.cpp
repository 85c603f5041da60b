//===- EmitLossOptimizer.cpp - loss, gradient accumulation, AdamW ---------===//
//
// Cross-entropy and MSE losses with their gradients and gradient accumulation into the
// fp32 gradient slots, for both targets; AdamW per parameter on the CPU, and on CUDA for an
// update in the backward (after the backward, the CUDA trainer updates every parameter
// with fp32 moments in one launch and those with 8-bit state as one group,
// CudaTrainer.cpp).
//
//===----------------------------------------------------------------------===//

#include "EmitContext.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The classes of cross-entropy logits: their last dimension, the sequence S for the span
/// head's softmax over positions.
std::string classes(Value logits) {
  int64_t last = EmitContext::features(logits);
  return ShapedType::isDynamic(last) ? "S" : std::to_string(last);
}

} // namespace

std::optional<LogicalResult> emitLossOptimizerOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](CrossEntropyOp ce) {
        os << ctx.call("crossEntropyForward") << ctx.name(ce.getLogits()) << ", "
           << ctx.name(ce.getLabels()) << ", " << ctx.name(ce.getResult()) << ", "
           << EmitContext::rows(ce.getLogits()) << ", " << classes(ce.getLogits()) << ", "
           << lossNormalizer(ce.getScale().convertToFloat()) << ctx.end();
        return success();
      })
      .Case([&](CrossEntropyGradOp g) {
        os << ctx.call("crossEntropyBackward") << ctx.name(g.getResultGrad()) << ", "
           << ctx.name(g.getLogits()) << ", " << ctx.name(g.getLabels()) << ", "
           << ctx.name(g.getLogitsGrad()) << ", " << EmitContext::rows(g.getLogits()) << ", "
           << classes(g.getLogits()) << ", " << lossNormalizer(g.getScale().convertToFloat())
           << ctx.end();
        return success();
      })
      .Case([&](MseLossOp mse) {
        os << ctx.call("mseLossForward") << ctx.name(mse.getPredictions()) << ", "
           << ctx.name(mse.getTargets()) << ", " << ctx.name(mse.getResult())
           << ", B, ctx.lossNormalizer" << ctx.end();
        return success();
      })
      .Case([&](MseLossGradOp g) {
        os << ctx.call("mseLossBackward") << ctx.name(g.getResultGrad()) << ", "
           << ctx.name(g.getPredictions()) << ", " << ctx.name(g.getTargets()) << ", "
           << ctx.name(g.getPredictionsGrad()) << ", B, ctx.lossNormalizer" << ctx.end();
        return success();
      })
      .Case([&](AccumulateGradOp acc) -> LogicalResult {
        auto param = acc.getParam().getDefiningOp<ParamOp>();
        if (!param || !bert::hasParamSlot(param, bert::ParamSlotKind::Grad))
          return acc.emitError("parameter has no gradient slot: run -bertc-plan-buffers");
        os << ctx.call("accumulate") << ctx.name(acc.getGrad()) << ", "
           << EmitContext::paramSlot(acc.getParam(), bert::ParamSlotKind::Grad) << ", "
           << EmitContext::numel(acc.getGrad()) << ctx.end();
        return success();
      })
      .Case([&](AdamWOp adamw) -> LogicalResult {
        // After the backward, the CUDA trainer updates every parameter with fp32 moments in
        // one launch over its chunk table and those with 8-bit state as one group
        // (CudaTrainer.cpp); an update in the backward is updated per parameter here.
        if (ctx.target == KernelTarget::Cuda && !adamw.getGrad())
          return adamw.emitError("the CUDA trainer updates every parameter in its optimizer "
                                 "step's shared launches after the backward, not per op");
        if (failed(checkAdamWSlots(adamw)))
          return failure();
        Value param = adamw.getParam();
        std::string grad = adamw.getGrad()
                               ? ctx.name(adamw.getGrad())
                               : EmitContext::paramSlot(param, bert::ParamSlotKind::Grad);
        // A 16-bit parameter: AdamW updates its fp32 master and rounds each updated value
        // into the working copy in the same pass.
        bool sixteenBit = !cast<RankedTensorType>(param.getType()).getElementType().isF32();
        std::string working = sixteenBit ? ctx.name(param) + ", " : "";
        std::string master = adamwValues(param, ctx.name(param));
        if (std::optional<int64_t> block = adamw.getStateBlock())
          os << ctx.call("adamw8bitUpdate") << master << ", " << grad << ", "
             << eightBitStateArgument(param) << ", " << working << EmitContext::numel(param)
             << ", QuantBlockSize(" << *block << "), ";
        else
          os << ctx.call("adamwUpdate") << master << ", " << grad << ", "
             << EmitContext::paramSlot(param, bert::ParamSlotKind::AdamM) << ", "
             << EmitContext::paramSlot(param, bert::ParamSlotKind::AdamV) << ", " << working
             << EmitContext::numel(param) << ", ";
        os << adamwConfigArgument(adamw, adamw.getWeightDecay().convertToDouble()) << ctx.end();
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult checkAdamWSlots(Operation *op) {
  auto adamw = cast<AdamWOp>(op);
  auto param = adamw.getParam().getDefiningOp<ParamOp>();
  if (!param || !bert::hasParamSlot(param, bert::ParamSlotKind::Value) ||
      (!adamw.getGrad() && !bert::hasParamSlot(param, bert::ParamSlotKind::Grad)) ||
      !bert::hasParamSlot(param, bert::ParamSlotKind::AdamM) ||
      !bert::hasParamSlot(param, bert::ParamSlotKind::AdamV))
    return adamw.emitError("parameter has no optimizer slots: run -bertc-plan-buffers");
  if (!cast<RankedTensorType>(adamw.getParam().getType()).getElementType().isF32() &&
      !bert::hasParamSlot(param, bert::ParamSlotKind::Master))
    return adamw.emitError("16-bit parameter has no master slot: run -bertc-plan-buffers");
  if (adamw.getStateBlock() && (!bert::hasParamSlot(param, bert::ParamSlotKind::AdamMAbsmax) ||
                                !bert::hasParamSlot(param, bert::ParamSlotKind::AdamVAbsmax)))
    return adamw.emitError("8-bit state has no absmax slots: run -bertc-plan-buffers");
  return success();
}

std::string adamwValues(Value param, StringRef values) {
  return cast<RankedTensorType>(param.getType()).getElementType().isF32()
             ? values.str()
             : EmitContext::paramSlot(param, bert::ParamSlotKind::Master);
}

std::string eightBitStateArgument(Value param) {
  return "{" + EmitContext::paramSlot(param, bert::ParamSlotKind::AdamM, "uint8_t") + ", " +
         EmitContext::paramSlot(param, bert::ParamSlotKind::AdamV, "uint8_t") + ", " +
         EmitContext::paramSlot(param, bert::ParamSlotKind::AdamMAbsmax) + ", " +
         EmitContext::paramSlot(param, bert::ParamSlotKind::AdamVAbsmax) + "}";
}

std::string adamwConfigArgument(Operation *op, double weightDecay) {
  auto adamw = cast<AdamWOp>(op);
  return "{ctx.lr, " + EmitContext::doubleLiteral(adamw.getBeta1().convertToDouble()) + ", " +
         EmitContext::doubleLiteral(adamw.getBeta2().convertToDouble()) + ", " +
         EmitContext::doubleLiteral(adamw.getEpsilon().convertToDouble()) + ", " +
         EmitContext::doubleLiteral(weightDecay) + ", ctx.adamStep}";
}

} // namespace bertc
