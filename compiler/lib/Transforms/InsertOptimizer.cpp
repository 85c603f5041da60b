//===- InsertOptimizer.cpp - the AdamW update of every trainable parameter ===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

namespace bertc {
#define GEN_PASS_DEF_INSERTOPTIMIZER
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

struct InsertOptimizerPass : bertc::impl::InsertOptimizerBase<InsertOptimizerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(module);
    if (failed(microStep))
      return signalPassFailure();
    if (module.lookupSymbol(bertc::kOptimizerStep)) {
      module.emitError("module already has an @optimizer_step");
      return signalPassFailure();
    }
    FailureOr<TrainAttr> train = bertc::getTrainSettings(module);
    if (failed(train))
      return signalPassFailure();
    const TrainValues &settings = train->getValues();

    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto step = builder.create<func::FuncOp>(module.getLoc(), bertc::kOptimizerStep,
                                             builder.getFunctionType({}, {}));
    builder.setInsertionPointToStart(step.addEntryBlock());
    for (ParamOp param : bertc::trainableParams(*microStep)) {
      auto copy = cast<ParamOp>(builder.clone(*param));
      double weightDecay = param.getDecay() ? settings.weightDecay : 0.0;
      builder.create<AdamWOp>(
          param.getLoc(), copy.getResult(), builder.getF64FloatAttr(settings.beta1),
          builder.getF64FloatAttr(settings.beta2), builder.getF64FloatAttr(settings.eps),
          builder.getF64FloatAttr(weightDecay));
    }
    builder.create<func::ReturnOp>(module.getLoc());
  }
};

} // namespace
