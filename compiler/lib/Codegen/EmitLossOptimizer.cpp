//===- EmitLossOptimizer.cpp - loss, gradient accumulation, AdamW ---------===//

#include "EmitContext.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The pointer to one of a parameter's fixed slots (`arena.grad`, `arena.adam_m`, ...).
std::string paramSlot(Value param, StringRef slot) {
  auto op = param.getDefiningOp<ParamOp>();
  auto offset = op ? op->getAttrOfType<IntegerAttr>(slot) : IntegerAttr();
  return "reinterpret_cast<float *>(arena + " +
         std::to_string(offset ? offset.getInt() : -1) + ")";
}

bool hasSlots(Value param) {
  auto op = param.getDefiningOp<ParamOp>();
  return op && op->hasAttr("arena.grad") && op->hasAttr("arena.adam_m") &&
         op->hasAttr("arena.adam_v");
}

} // namespace

LogicalResult emitLossOptimizerOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](CrossEntropyOp ce) {
        os << "  cpu::crossEntropyForward(" << ctx.name(ce.getLogits()) << ", "
           << ctx.name(ce.getLabels()) << ", " << ctx.name(ce.getResult()) << ", B, "
           << EmitContext::features(ce.getLogits()) << ", ctx.lossNormalizer);\n";
        return success();
      })
      .Case([&](CrossEntropyGradOp g) {
        os << "  cpu::crossEntropyBackward(" << ctx.name(g.getResultGrad()) << ", "
           << ctx.name(g.getLogits()) << ", " << ctx.name(g.getLabels()) << ", "
           << ctx.name(g.getLogitsGrad()) << ", B, " << EmitContext::features(g.getLogits())
           << ", ctx.lossNormalizer);\n";
        return success();
      })
      .Case([&](AccumulateGradOp acc) -> LogicalResult {
        if (!hasSlots(acc.getParam()))
          return acc.emitError("parameter has no gradient slot: run -bertc-plan-buffers");
        os << "  cpu::accumulate(" << ctx.name(acc.getGrad()) << ", "
           << paramSlot(acc.getParam(), "arena.grad") << ", "
           << EmitContext::numel(acc.getGrad()) << ");\n";
        return success();
      })
      .Case([&](AdamWOp adamw) -> LogicalResult {
        Value param = adamw.getParam();
        if (!hasSlots(param))
          return adamw.emitError("parameter has no optimizer slots: run -bertc-plan-buffers");
        os << "  cpu::adamwUpdate(" << ctx.name(param) << ", " << paramSlot(param, "arena.grad")
           << ", " << paramSlot(param, "arena.adam_m") << ", "
           << paramSlot(param, "arena.adam_v") << ", " << EmitContext::numel(param)
           << ", {ctx.lr, " << EmitContext::doubleLiteral(adamw.getBeta1().convertToDouble())
           << ", " << EmitContext::doubleLiteral(adamw.getBeta2().convertToDouble()) << ", "
           << EmitContext::doubleLiteral(adamw.getEpsilon().convertToDouble()) << ", "
           << EmitContext::doubleLiteral(adamw.getWeightDecay().convertToDouble())
           << ", ctx.step});\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

} // namespace bertc
