//===- StepCost.cpp - how long a training step should take ----------------===//

#include "bertc/Analysis/StepCost.h"

#include "bertc/Analysis/TrainModule.h"

using namespace mlir;

namespace bertc {

const DeviceModel &cpuDeviceModel() {
  // Measured order of magnitude for OpenBLAS sgemm and streaming loops on two cores.
  static const DeviceModel cpu{"cpu", 50e9, 10e9};
  return cpu;
}

StepCost estimateStepCost(ModuleOp module, const DeviceModel &device) {
  StepCost cost;
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (failed(bounds))
    return cost;
  auto add = [&](Operation *op, double repeat) {
    auto costly = dyn_cast<bert::CostOpInterface>(op);
    if (!costly)
      return;
    double flops = costly.estimateFlops(bounds->maxBatch, bounds->maxSeq);
    double bytes = costly.estimateBytes(bounds->maxBatch, bounds->maxSeq);
    cost.flops += repeat * flops;
    cost.seconds +=
        repeat * std::max(flops / device.flopsPerSecond, bytes / device.bytesPerSecond);
  };
  double accumulation = double(accumulationSteps(module, *bounds));
  if (FailureOr<func::FuncOp> microStep = getMicroStep(module); succeeded(microStep))
    microStep->walk([&](Operation *op) { add(op, accumulation); });
  if (auto optimizerStep = module.lookupSymbol<func::FuncOp>(kOptimizerStep))
    optimizerStep.walk([&](Operation *op) { add(op, 1.0); });
  return cost;
}

} // namespace bertc
