//===- InsertOptimizer.cpp - the AdamW update of every trainable parameter ===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"
#include "bertc/abi/adamw_8bit_state.h"
#include "llvm/ADT/DenseSet.h"

namespace bertc {
#define GEN_PASS_DEF_INSERTOPTIMIZER
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

struct InsertOptimizerPass : bertc::impl::InsertOptimizerBase<InsertOptimizerPass> {
  using InsertOptimizerBase::InsertOptimizerBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (optimizerState != "fp32" && optimizerState != "8bit") {
      module.emitError() << "optimizer-state '" << optimizerState << "': expected fp32 or 8bit";
      return signalPassFailure();
    }
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

    llvm::DenseSet<Value> embeddingTables;
    microStep->walk([&](EmbeddingOp embedding) { embeddingTables.insert(embedding.getTable()); });

    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto step = builder.create<func::FuncOp>(module.getLoc(), bertc::kOptimizerStep,
                                             builder.getFunctionType({}, {}));
    builder.setInsertionPointToStart(step.addEntryBlock());
    for (ParamOp param : bertc::trainableParams(*microStep)) {
      auto copy = cast<ParamOp>(builder.clone(*param));
      double weightDecay = param.getDecay() ? settings.weightDecay : 0.0;
      bool eightBit = optimizerState == "8bit" && !embeddingTables.contains(param.getResult()) &&
                      param.getResult().getType().getNumElements() >= bertc::kMin8bitStateValues;
      builder.create<AdamWOp>(
          param.getLoc(), copy.getResult(), /*grad=*/Value(),
          builder.getF64FloatAttr(settings.beta1), builder.getF64FloatAttr(settings.beta2),
          builder.getF64FloatAttr(settings.eps), builder.getF64FloatAttr(weightDecay),
          eightBit ? builder.getI64IntegerAttr(int64_t(bertc::QuantBlockSize::k2048))
                   : IntegerAttr());
    }
    builder.create<func::ReturnOp>(module.getLoc());
  }
};

} // namespace
