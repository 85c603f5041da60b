//===- EmitCudaGemm.cpp - linear layers through cuBLASLt ------------------===//
//
// Linear layers and their gradients as cuBLASLt GEMMs (the bias as the forward's
// epilogue); the bias gradient is a column sum.
//
//===----------------------------------------------------------------------===//

#include "CudaEmitters.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

LogicalResult emitCudaGemmOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](LinearOp linear) {
        os << "  dev.gemms->linearForward(" << ctx.name(linear.getInput()) << ", "
           << ctx.name(linear.getWeight()) << ", " << ctx.name(linear.getBias()) << ", "
           << ctx.name(linear.getResult()) << ", " << EmitContext::rows(linear.getInput())
           << ", " << EmitContext::features(linear.getInput()) << ", "
           << EmitContext::features(linear.getResult()) << "); // bias epilogue\n";
        return success();
      })
      .Case([&](LinearGradInputOp grad) {
        os << "  dev.gemms->linearBackwardInput(" << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getWeight()) << ", " << ctx.name(grad.getInputGrad()) << ", "
           << EmitContext::rows(grad.getResultGrad()) << ", "
           << EmitContext::features(grad.getInputGrad()) << ", "
           << EmitContext::features(grad.getResultGrad()) << ");\n";
        return success();
      })
      .Case([&](LinearGradWeightOp grad) {
        os << "  dev.gemms->linearBackwardWeight(" << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getInput()) << ", " << ctx.name(grad.getWeightGrad()) << ", "
           << EmitContext::rows(grad.getResultGrad()) << ", "
           << EmitContext::features(grad.getInput()) << ", "
           << EmitContext::features(grad.getResultGrad()) << ");\n";
        return success();
      })
      .Case([&](BiasGradOp grad) {
        os << "  cuda::biasBackward(" << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getBiasGrad()) << ", " << EmitContext::rows(grad.getResultGrad())
           << ", " << EmitContext::features(grad.getResultGrad()) << ", dev.stream);\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

} // namespace bertc
