//===- AccumulateInGemm.cpp - linear gradients straight into their slots --===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

namespace bertc {
#define GEN_PASS_DEF_ACCUMULATEINGEMM
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

struct AccumulateInGemmPass : bertc::impl::AccumulateInGemmBase<AccumulateInGemmPass> {
  void runOnOperation() override {
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(getOperation());
    if (failed(microStep))
      return signalPassFailure();
    SmallVector<AccumulateGradOp> accumulations;
    microStep->walk([&](AccumulateGradOp accumulation) { accumulations.push_back(accumulation); });
    for (AccumulateGradOp accumulation : accumulations) {
      Operation *grad = accumulation.getGrad().getDefiningOp();
      if (!grad || !grad->hasOneUse())
        continue;
      OpBuilder builder(grad);
      if (auto gemm = dyn_cast<LinearGradWeightOp>(grad))
        builder.create<AccumulateLinearGradWeightOp>(gemm.getLoc(), accumulation.getParam(),
                                                     gemm.getResultGrad(), gemm.getInput(),
                                                     gemm.getTf32());
      else if (auto sum = dyn_cast<BiasGradOp>(grad))
        builder.create<AccumulateBiasGradOp>(sum.getLoc(), accumulation.getParam(),
                                             sum.getResultGrad());
      else
        continue;
      accumulation.erase();
      grad->erase();
    }
  }
};

} // namespace
