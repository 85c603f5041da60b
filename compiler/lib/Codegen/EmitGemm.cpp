//===- EmitGemm.cpp - linear layers and their gradients -------------------===//
//
// Linear layers and their gradients for both targets: OpenBLAS GEMMs on the CPU, cuBLASLt
// GEMMs on CUDA (`dev.gemms`, on the step's stream, a bias as the forward's epilogue,
// TF32 for an op marked `tf32`); the bias gradient is a column sum (on CUDA in one launch
// through the op's workspace and the run's tickets, `dev.columnSumTickets`). The
// accumulating forms (-bertc-accumulate-in-gemm) add into the parameter's gradient slot.
//
//===----------------------------------------------------------------------===//

#include "EmitContext.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

std::optional<LogicalResult> emitGemmOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  const bool cuda = ctx.target == KernelTarget::Cuda;
  // The start of a GEMM call: the CPU kernel, or the CUDA trainer's cuBLASLt wrapper.
  auto gemm = [&](StringRef fn) { return cuda ? "  dev.gemms->" + fn.str() + "(" : ctx.call(fn); };
  // A GEMM marked `tf32` (-bertc-lower-to-target) names its math; only cuBLASLt has it.
  const bool tf32 = op->hasAttr("tf32");
  if (tf32 && !cuda)
    return LogicalResult(op->emitOpError("runs in TF32 (--tf32), which only the cuda targets do"));
  const StringRef math = tf32 ? ", cuda::GemmMath::Tf32" : "";
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](LinearOp linear) {
        Value bias = linear.getBias();
        os << gemm("linearForward") << ctx.name(linear.getInput()) << ", "
           << ctx.name(linear.getWeight()) << ", " << ctx.nameOrNull(bias, linear.getWeight())
           << ", " << ctx.name(linear.getResult()) << ", " << EmitContext::rows(linear.getInput())
           << ", " << EmitContext::features(linear.getInput()) << ", "
           << EmitContext::features(linear.getResult()) << math
           << (cuda && bias ? "); // bias epilogue\n" : ");\n");
        return success();
      })
      .Case([&](LinearGradInputOp grad) {
        os << gemm("linearBackwardInput") << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getWeight()) << ", " << ctx.name(grad.getInputGrad()) << ", "
           << EmitContext::rows(grad.getResultGrad()) << ", "
           << EmitContext::features(grad.getInputGrad()) << ", "
           << EmitContext::features(grad.getResultGrad()) << math << ");\n";
        return success();
      })
      .Case([&](LinearGradInputAddOp grad) {
        os << gemm("linearBackwardInputAdd") << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getWeight()) << ", " << ctx.name(grad.getAddend()) << ", "
           << ctx.name(grad.getInputGrad()) << ", " << EmitContext::rows(grad.getResultGrad())
           << ", " << EmitContext::features(grad.getInputGrad()) << ", "
           << EmitContext::features(grad.getResultGrad()) << math << ");\n";
        return success();
      })
      .Case([&](LinearGradWeightOp grad) {
        os << gemm("linearBackwardWeight") << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getInput()) << ", " << ctx.name(grad.getWeightGrad()) << ", "
           << EmitContext::rows(grad.getResultGrad()) << ", "
           << EmitContext::features(grad.getInput()) << ", "
           << EmitContext::features(grad.getResultGrad()) << math << ");\n";
        return success();
      })
      .Case([&](AccumulateLinearGradWeightOp grad) -> LogicalResult {
        FailureOr<std::string> slot = gradientSlot(op, grad.getParam());
        if (failed(slot))
          return failure();
        os << gemm("linearBackwardWeightAccumulate") << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getInput()) << ", " << *slot << ", "
           << EmitContext::rows(grad.getResultGrad()) << ", "
           << EmitContext::features(grad.getInput()) << ", "
           << EmitContext::features(grad.getResultGrad()) << math << ");\n";
        return success();
      })
      .Case([&](BiasGradOp grad) {
        os << ctx.call("biasBackward") << ctx.name(grad.getResultGrad()) << ", "
           << ctx.name(grad.getBiasGrad()) << ", " << (cuda ? columnSumScratch(op) : std::string())
           << EmitContext::rows(grad.getResultGrad()) << ", "
           << EmitContext::features(grad.getResultGrad()) << ctx.end();
        return success();
      })
      .Case([&](AccumulateBiasGradOp grad) -> LogicalResult {
        FailureOr<std::string> slot = gradientSlot(op, grad.getParam());
        if (failed(slot))
          return failure();
        os << ctx.call("biasBackwardAccumulate") << ctx.name(grad.getResultGrad()) << ", " << *slot
           << ", " << (cuda ? columnSumScratch(op) : std::string())
           << EmitContext::rows(grad.getResultGrad()) << ", "
           << EmitContext::features(grad.getResultGrad()) << ctx.end();
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
