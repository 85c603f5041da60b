//===- StepCost.cpp - how long a training step should take ----------------===//

#include "bertc/Analysis/StepCost.h"

#include "bertc/Analysis/TrainModule.h"

#include <algorithm>
#include <map>

using namespace mlir;
using mlir::bert::CostTarget;
using mlir::bert::KernelWork;

namespace bertc {

double estimateKernelSeconds(const KernelWork &kernel, const DeviceModel &device) {
  double compute = kernel.flops / device.flopsPerSecond(kernel.unit);
  double memory = kernel.bytes / device.bytesPerSecond;
  double hostLink =
      device.pcieBytesPerSecond > 0 ? kernel.hostLinkBytes / device.pcieBytesPerSecond : 0;
  return std::max(compute, memory) + hostLink + kernel.launches * device.secondsPerLaunch;
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

/// Bytes over PCIe per optimizer step with the optimizer on the host.
struct OffloadTransfer {
  double down = 0; ///< every trainable parameter's fp32 gradient
  double up = 0;   ///< each trainable parameter's working copy
};

OffloadTransfer offloadTransferBytes(func::FuncOp microStep) {
  OffloadTransfer bytes;
  for (bert::ParamOp param : trainableParams(microStep)) {
    RankedTensorType type = param.getResult().getType();
    double elements = double(type.getNumElements());
    bytes.down += 4 * elements;
    bytes.up += elements * double(type.getElementType().getIntOrFloatBitWidth() / 8);
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
  std::map<std::string, OpTime> byOp;
  auto tally = [&](const std::string &name, double runs, double launches, double flops,
                   double seconds) {
    OpTime &entry = byOp[name];
    entry.op = name;
    entry.runs += runs;
    entry.launches += launches;
    entry.flops += flops;
    entry.seconds += seconds;
  };
  // `on` the device, or the host's model for an offloaded optimizer, whose work is tallied
  // as one entry once the overlap is known (`tallied` false).
  auto add = [&](Operation *op, double repeat, const DeviceModel &on, bool tallied) {
    SmallVector<KernelWork, 1> kernels =
        estimateOpKernels(op, bounds->maxBatch, bounds->maxSeq, on.target);
    double flops = 0, seconds = 0, launches = 0;
    for (const KernelWork &kernel : kernels) {
      double kernelSeconds = repeat * estimateKernelSeconds(kernel, on);
      // Added to the step kernel by kernel, as the estimate always has, for the same bits.
      cost.flops += repeat * kernel.flops;
      cost.seconds += kernelSeconds;
      flops += repeat * kernel.flops;
      seconds += kernelSeconds;
      launches += repeat * kernel.launches;
    }
    if (tallied && !kernels.empty())
      tally(op->getName().getStringRef().str(), repeat, launches, flops, seconds);
  };
  double accumulation = double(accumulationSteps(module, *bounds));
  // The backward of one micro-step: its ops after the one that makes the loss.
  Operation *loss =
      microStep->getBody().front().getTerminator()->getNumOperands() > 0
          ? microStep->getBody().front().getTerminator()->getOperand(0).getDefiningOp()
          : nullptr;
  double backwardSeconds = 0;
  bool inBackward = false;
  for (Operation &op : microStep->getBody().front()) {
    double before = cost.seconds;
    add(&op, accumulation, device, true);
    if (inBackward)
      backwardSeconds += (cost.seconds - before) / accumulation;
    inBackward |= &op == loss;
  }
  // The runtime zeroes the gradient region before each step's first micro-batch: one
  // memset (none where every update runs in the backward and there is no region).
  if (bert::PlanAttr plan = findPlan(module); plan && plan.getGradients().bytes > 0) {
    double seconds = estimateKernelSeconds(
        {bert::ComputeUnit::Fp32Cores, 0, double(plan.getGradients().bytes)}, device);
    cost.seconds += seconds;
    tally(kTimedGradientZeroing, 1, 1, 0, seconds);
  }
  // Offloaded from a GPU, AdamW runs the CPU trainer's kernels on the host once the
  // gradients are down, and the trainable parameters go back up. Streamed, the gradients
  // come down and the host updates during the last micro-step's backward: the step waits
  // only for what outlasts it, and for the uploads.
  bool offloaded = optimizerOnHost(module) && device.target == CostTarget::Cuda;
  if (auto optimizerStep = module.lookupSymbol<func::FuncOp>(kOptimizerStep)) {
    double deviceSeconds = cost.seconds, deviceFlops = cost.flops;
    optimizerStep.walk(
        [&](Operation *op) { add(op, 1.0, offloaded ? cpuDeviceModel() : device, !offloaded); });
    if (offloaded) {
      OffloadTransfer bytes = offloadTransferBytes(*microStep);
      double hostWork = cost.seconds - deviceSeconds + bytes.down / device.pcieBytesPerSecond;
      double up = bytes.up / device.pcieBytesPerSecond;
      cost.hostSeconds = hostWork + up;
      cost.seconds =
          deviceSeconds + up +
          (streamsGradients(module) ? std::max(0.0, hostWork - backwardSeconds) : hostWork);
      tally(kHostOptimizer, 1, 0, cost.flops - deviceFlops, cost.seconds - deviceSeconds);
    }
  }
  for (auto &entry : byOp)
    cost.byOp.push_back(std::move(entry.second));
  llvm::stable_sort(cost.byOp,
                    [](const OpTime &a, const OpTime &b) { return a.seconds > b.seconds; });
  return cost;
}

} // namespace bertc
