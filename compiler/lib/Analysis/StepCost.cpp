//===- StepCost.cpp - how long a training step should take ----------------===//

#include "bertc/Analysis/StepCost.h"

#include "bertc/Analysis/TrainModule.h"

using namespace mlir;

namespace bertc {

const DeviceModel &cpuDeviceModel() {
  // Measured order of magnitude for OpenBLAS sgemm and streaming loops on two cores; the
  // CPU computes 16-bit storage in fp32.
  static const DeviceModel cpu{"cpu", 50e9, 50e9, 10e9, 1e-6, ""};
  return cpu;
}

namespace {
// Dense datasheet peaks (no sparsity; 16-bit GEMMs with fp32 accumulation; fp32 GEMMs
// without TF32) of one representative card per generation, and a typical launch cost.
const DeviceModel kGpuModels[] = {
    {"sm_75", 8.1e12, 65e12, 320e9, 5e-6, "fp16"},    // T4
    {"sm_80", 19.5e12, 312e12, 1555e9, 5e-6, "bf16"}, // A100 40GB
    {"sm_86", 35.6e12, 71e12, 936e9, 5e-6, "bf16"},   // RTX 3090
    {"sm_89", 82.6e12, 165e12, 1008e9, 5e-6, "bf16"}, // RTX 4090
    {"sm_90", 67e12, 989e12, 3350e9, 5e-6, "bf16"},   // H100 SXM
};
} // namespace

const DeviceModel *gpuDeviceModel(llvm::StringRef arch) {
  for (const DeviceModel &model : kGpuModels)
    if (arch == model.name)
      return &model;
  return nullptr;
}

const DeviceModel &deviceModel(llvm::StringRef arch) {
  const DeviceModel *gpu = gpuDeviceModel(arch);
  return gpu ? *gpu : cpuDeviceModel();
}

llvm::StringRef knownArchs() { return "sm_75, sm_80, sm_86, sm_89, sm_90"; }

/// Whether `op` reads 16-bit floats, and so runs at the device's 16-bit rate.
static bool readsHalf(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && (tensor.getElementType().isF16() || tensor.getElementType().isBF16());
  });
}

double estimateOpSeconds(Operation *op, int64_t batch, int64_t seq, const DeviceModel &device) {
  auto costly = dyn_cast<bert::CostOpInterface>(op);
  if (!costly)
    return 0;
  double flops = costly.estimateFlops(batch, seq);
  double bytes = costly.estimateBytes(batch, seq);
  double rate = readsHalf(op) ? device.halfFlopsPerSecond : device.flopsPerSecond;
  return std::max(flops / rate, bytes / device.bytesPerSecond) + device.secondsPerOp;
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
    cost.flops += repeat * costly.estimateFlops(bounds->maxBatch, bounds->maxSeq);
    cost.seconds += repeat * estimateOpSeconds(op, bounds->maxBatch, bounds->maxSeq, device);
  };
  double accumulation = double(accumulationSteps(module, *bounds));
  if (FailureOr<func::FuncOp> microStep = getMicroStep(module); succeeded(microStep))
    microStep->walk([&](Operation *op) { add(op, accumulation); });
  if (auto optimizerStep = module.lookupSymbol<func::FuncOp>(kOptimizerStep))
    optimizerStep.walk([&](Operation *op) { add(op, 1.0); });
  return cost;
}

} // namespace bertc
