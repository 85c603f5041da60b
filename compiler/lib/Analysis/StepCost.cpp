//===- StepCost.cpp - how long a training step should take ----------------===//

#include "bertc/Analysis/StepCost.h"

#include "bertc/Analysis/TrainModule.h"

#include <algorithm>

using namespace mlir;
using mlir::bert::CostTarget;
using mlir::bert::KernelWork;

namespace bertc {

double estimateKernelSeconds(const KernelWork &kernel, const DeviceModel &device) {
  double compute = kernel.flops / device.flopsPerSecond(kernel.unit);
  double memory = kernel.bytes / device.bytesPerSecond;
  return std::max(compute, memory) + kernel.launches * device.secondsPerLaunch;
}

SmallVector<KernelWork, 1> estimateOpKernels(Operation *op, int64_t batch, int64_t seq,
                                             CostTarget target) {
  auto costly = dyn_cast<bert::CostOpInterface>(op);
  if (!costly)
    return {};
  return costly.estimateKernels(batch, seq, target);
}

double estimateOpFlops(Operation *op, int64_t batch, int64_t seq, CostTarget target) {
  double flops = 0;
  for (const KernelWork &kernel : estimateOpKernels(op, batch, seq, target))
    flops += kernel.flops;
  return flops;
}

double estimateOpSeconds(Operation *op, int64_t batch, int64_t seq, const DeviceModel &device) {
  double seconds = 0;
  for (const KernelWork &kernel : estimateOpKernels(op, batch, seq, device.target))
    seconds += estimateKernelSeconds(kernel, device);
  return seconds;
}

bool isComputeBound(Operation *op, int64_t batch, int64_t seq, const DeviceModel &device) {
  double compute = 0, memory = 0;
  for (const KernelWork &kernel : estimateOpKernels(op, batch, seq, device.target)) {
    compute += kernel.flops / device.flopsPerSecond(kernel.unit);
    memory += kernel.bytes / device.bytesPerSecond;
  }
  return compute > 0 && compute >= memory;
}

StepCost estimateStepCost(ModuleOp module, const DeviceModel &device) {
  StepCost cost;
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (failed(bounds))
    return cost;
  auto add = [&](Operation *op, double repeat) {
    for (const KernelWork &kernel :
         estimateOpKernels(op, bounds->maxBatch, bounds->maxSeq, device.target)) {
      cost.flops += repeat * kernel.flops;
      cost.seconds += repeat * estimateKernelSeconds(kernel, device);
    }
  };
  double accumulation = double(accumulationSteps(module, *bounds));
  if (FailureOr<func::FuncOp> microStep = getMicroStep(module); succeeded(microStep))
    microStep->walk([&](Operation *op) { add(op, accumulation); });
  if (auto optimizerStep = module.lookupSymbol<func::FuncOp>(kOptimizerStep))
    optimizerStep.walk([&](Operation *op) { add(op, 1.0); });
  return cost;
}

} // namespace bertc
