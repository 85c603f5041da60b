//===- EmitGemm.cpp - linear layers and their gradients -------------------===//

#include "EmitContext.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

LogicalResult emitGemmOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](LinearOp linear) {
        os << "  cpu::linearForward(" << ctx.name(linear.getInput()) << ", "
           << ctx.name(linear.getWeight()) << ", " << ctx.name(linear.getBias()) << ", "
           << ctx.name(linear.getResult()) << ", " << EmitContext::rows(linear.getInput())
           << ", " << EmitContext::features(linear.getInput()) << ", "
           << EmitContext::features(linear.getResult()) << ");\n";
        return success();
      })
      .Case([&](LinearGradInputOp grad) {
        os << "  cpu::linearBackwardInput(" << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getWeight()) << ", " << ctx.name(grad.getInputGrad()) << ", "
           << EmitContext::rows(grad.getResultGrad()) << ", "
           << EmitContext::features(grad.getInputGrad()) << ", "
           << EmitContext::features(grad.getResultGrad()) << ");\n";
        return success();
      })
      .Case([&](LinearGradWeightOp grad) {
        os << "  cpu::linearBackwardWeight(" << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getInput()) << ", " << ctx.name(grad.getWeightGrad()) << ", "
           << EmitContext::rows(grad.getResultGrad()) << ", "
           << EmitContext::features(grad.getInput()) << ", "
           << EmitContext::features(grad.getResultGrad()) << ");\n";
        return success();
      })
      .Case([&](BiasGradOp grad) {
        os << "  cpu::biasBackward(" << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getBiasGrad()) << ", " << EmitContext::rows(grad.getResultGrad())
           << ", " << EmitContext::features(grad.getResultGrad()) << ");\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

} // namespace bertc
