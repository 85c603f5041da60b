//===- FuseOptimizer.cpp - each AdamW update where its gradient is final ---===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

namespace bertc {
#define GEN_PASS_DEF_FUSEOPTIMIZER
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// Fails with a diagnostic on the module when an update in the backward would not be the
/// update after the step (see Passes.td).
LogicalResult checkFusable(ModuleOp module, const TrainValues &train, bertc::DimBounds bounds) {
  constexpr StringLiteral cannot = "cannot run the optimizer in the backward: ";
  if (int64_t steps = bertc::accumulationSteps(module, bounds); steps > 1)
    return module.emitError() << cannot << "it needs one micro-step per optimizer step, and batch "
                              << train.batch << " runs as " << steps << " micro-steps of "
                              << bounds.maxBatch << " rows";
  if (train.maxGradNorm > 0)
    return module.emitError() << cannot << "max_grad_norm = " << train.maxGradNorm
                              << " clips by the norm of every gradient, known only after the "
                                 "whole backward";
  auto precision = module->getAttrOfType<StringAttr>("bert.precision");
  if (precision && precision.getValue() == "fp16")
    return module.emitError() << cannot
                              << "fp16's loss scaling skips the whole update when any gradient "
                                 "overflows";
  return success();
}

/// The op the update of `param` must follow: the last reader of the parameter other than
/// `accumulation`, or `accumulation` (which follows the gradient) if that is later.
Operation *lastReader(ParamOp param, AccumulateGradOp accumulation) {
  Operation *last = accumulation;
  for (Operation *user : param.getResult().getUsers())
    if (user != accumulation.getOperation() && last->isBeforeInBlock(user))
      last = user;
  return last;
}

struct FuseOptimizerPass : bertc::impl::FuseOptimizerBase<FuseOptimizerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(module);
    FailureOr<func::FuncOp> optimizerStep = bertc::getOptimizerStep(module);
    FailureOr<TrainAttr> train = bertc::getTrainSettings(module);
    FailureOr<bertc::DimBounds> bounds = bertc::getDimBounds(module);
    if (failed(microStep) || failed(optimizerStep) || failed(train) || failed(bounds) ||
        failed(checkFusable(module, train->getValues(), *bounds)))
      return signalPassFailure();

    Block &body = microStep->getBody().front();
    llvm::StringMap<ParamOp> params;
    llvm::DenseMap<Value, AccumulateGradOp> accumulations;
    for (Operation &op : body) {
      if (auto param = dyn_cast<ParamOp>(op))
        params[param.getName()] = param;
      if (auto accumulation = dyn_cast<AccumulateGradOp>(op)) {
        if (!accumulations.try_emplace(accumulation.getParam(), accumulation).second) {
          accumulation.emitError("a second gradient accumulation of the same parameter");
          return signalPassFailure();
        }
      }
    }
    SmallVector<AdamWOp> updates;
    optimizerStep->walk([&](AdamWOp update) { updates.push_back(update); });
    for (AdamWOp update : updates) {
      auto copy = update.getParam().getDefiningOp<ParamOp>();
      ParamOp param = copy ? params.lookup(copy.getName()) : ParamOp();
      AccumulateGradOp accumulation =
          param ? accumulations.lookup(param.getResult()) : AccumulateGradOp();
      if (!accumulation || update.getGrad()) {
        update.emitError("the update's parameter has no gradient accumulation in @micro_step");
        return signalPassFailure();
      }
      OpBuilder builder(module.getContext());
      builder.setInsertionPointAfter(lastReader(param, accumulation));
      builder.create<AdamWOp>(update.getLoc(), param.getResult(), accumulation.getGrad(),
                              update.getBeta1Attr(), update.getBeta2Attr(), update.getEpsilonAttr(),
                              update.getWeightDecayAttr(), update.getStateBlockAttr());
      accumulation.erase();
      update.erase();
      if (copy->use_empty())
        copy.erase();
    }
  }
};

} // namespace
