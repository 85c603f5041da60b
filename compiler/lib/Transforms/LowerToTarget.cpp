//===- LowerToTarget.cpp - the kernels a target runs, in the IR -----------===//
//
// Marks each op whose kernels differ between the targets in what they compute with the
// target's choice (see Passes.td): an attention_grad recomputes its forward first on the
// cuda target and not on the cpu target.
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
    getOperation().walk([&](AttentionGradOp grad) { grad.setRecomputeForward(cuda); });
  }
};

} // namespace
