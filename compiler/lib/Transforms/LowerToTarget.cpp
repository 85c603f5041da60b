//===- LowerToTarget.cpp - the kernels a target runs, in the IR -----------===//
//
// Marks each op whose kernels differ between the targets in what they compute with the
// target's choice (see Passes.td): with tf32, the cuda target's fp32 GEMMs round their
// operands to TF32.
//
//===----------------------------------------------------------------------===//

#include "bertc/Transforms/Passes.h"

namespace bertc {
#define GEN_PASS_DEF_LOWERTOTARGET
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

struct LowerToTargetPass : bertc::impl::LowerToTargetBase<LowerToTargetPass> {
  using LowerToTargetBase::LowerToTargetBase;

  void runOnOperation() override {
    if (target != "cpu" && target != "cuda") {
      getOperation().emitError() << "-bertc-lower-to-target: unknown target '" << target
                                 << "' (expected cpu or cuda)";
      return signalPassFailure();
    }
    bool cuda = target == "cuda";
    if (tf32 && !cuda) {
      getOperation().emitError() << "-bertc-lower-to-target: tf32 needs target=cuda";
      return signalPassFailure();
    }
    auto isF32 = [](Value operand) {
      return cast<RankedTensorType>(operand.getType()).getElementType().isF32();
    };
    getOperation().walk([&](Operation *op) {
      if (auto linear = dyn_cast<LinearOp>(op))
        linear.setTf32(tf32 && isF32(linear.getInput()));
      else if (auto grad = dyn_cast<LinearGradInputOp>(op))
        grad.setTf32(tf32 && isF32(grad.getResultGrad()));
      else if (auto grad = dyn_cast<LinearGradWeightOp>(op))
        grad.setTf32(tf32 && isF32(grad.getInput()));
    });
  }
};

} // namespace
