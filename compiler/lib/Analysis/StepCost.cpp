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

namespace {

/// Bytes over PCIe per optimizer step with the optimizer on the host: every gradient
/// down, each trainable parameter's working copy back up.
double offloadTransferBytes(func::FuncOp microStep) {
  double bytes = 0;
  for (bert::ParamOp param : trainableParams(microStep)) {
    RankedTensorType type = param.getResult().getType();
    bytes += double(type.getNumElements()) *
             double(4 + type.getElementType().getIntOrFloatBitWidth() / 8);
  }
  return bytes;
}

} // namespace

StepCost estimateStepCost(ModuleOp module, const DeviceModel &device) {
  StepCost cost;
  FailureOr<DimBounds> bounds = getDimBounds(module);
  FailureOr<func::FuncOp> microStep = getMicroStep(module);
  if (failed(bounds) || failed(microStep))
    return cost;
  auto add = [&](Operation *op, double repeat, const DeviceModel &on) {
    for (const KernelWork &kernel :
         estimateOpKernels(op, bounds->maxBatch, bounds->maxSeq, on.target)) {
      cost.flops += repeat * kernel.flops;
      cost.seconds += repeat * estimateKernelSeconds(kernel, on);
    }
  };
  double accumulation = double(accumulationSteps(module, *bounds));
  microStep->walk([&](Operation *op) { add(op, accumulation, device); });
  // Offloaded from a GPU, AdamW runs the CPU trainer's kernels on the host, after the
  // gradients come down, and the parameters go back up (not overlapped: the step waits).
  bool offloaded = optimizerOnHost(module) && device.target == CostTarget::Cuda;
  const DeviceModel &optimizerDevice = offloaded ? cpuDeviceModel() : device;
  double before = cost.seconds;
  if (auto optimizerStep = module.lookupSymbol<func::FuncOp>(kOptimizerStep))
    optimizerStep.walk([&](Operation *op) { add(op, 1.0, optimizerDevice); });
  if (offloaded) {
    cost.seconds += offloadTransferBytes(*microStep) / device.pcieBytesPerSecond;
    cost.hostSeconds = cost.seconds - before;
  }
  return cost;
}

} // namespace bertc
