//===- PlanExplain.cpp - the plan told tensor by tensor -------------------===//

#include "bertc/Driver/PlanExplain.h"

#include "bertc/Driver/ByteSize.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace bertc {

void printExplanation(const StepMemory &memory, const PlanSummary &plan, unsigned count,
                      raw_ostream &os) {
  std::vector<const PlannedTensor *> live = liveAt(memory, memory.peakStep);
  int64_t fixed = plan.parameterBytes + plan.gradientBytes + plan.optimizerStateBytes +
                  plan.masterWeightBytes + plan.workspaceBytes;
  os << llvm::formatv("peak: op {0} of {1} ({2}), {3} of tensors live, on top of {4} of "
                      "parameters, gradients, optimizer state and workspace\n",
                      memory.peakStep, memory.steps.size(),
                      memory.steps.empty() ? "" : memory.steps[memory.peakStep],
                      formatBytes(memory.peakLiveBytes), formatBytes(fixed));
  os << llvm::formatv("  {0} tensors live there; the largest:\n", live.size());
  os << llvm::formatv("  {0,10}  {1,-11}  {2,-7}  {3,-18}  {4}\n", "bytes", "category", "dtype",
                      "shape", "tensor (made by, declared at)");
  for (const PlannedTensor *tensor : llvm::ArrayRef(live).take_front(count))
    os << llvm::formatv("  {0,10}  {1,-11}  {2,-7}  {3,-18}  {4} ({5}{6}{7})\n",
                        formatBytes(tensor->bytes), tensor->category, tensor->dtype, tensor->shape,
                        tensor->name, tensor->producer, tensor->origin.empty() ? "" : ", ",
                        tensor->origin);
  os << llvm::formatv("time: about {0:F4} s a step on {1} (estimated), the longest first:\n",
                      plan.estimatedStepSeconds, plan.device);
  os << llvm::formatv("  {0,10}  {1,6}  {2,8}  {3,9}  {4}\n", "seconds", "share", "launches",
                      "GFLOP", "op (all its runs in a step)");
  for (const OpTime &op : llvm::ArrayRef(plan.stepTime).take_front(count))
    os << llvm::formatv("  {0,10:F6}  {1,5:F1}%  {2,8}  {3,9:F2}  {4}\n", op.seconds,
                        plan.estimatedStepSeconds > 0 ? 100 * op.seconds / plan.estimatedStepSeconds
                                                      : 0.0,
                        int64_t(op.launches), op.flops / 1e9, op.op);
}

namespace {

/// How memory.html names and files a parameter's slot: the suffix after its name and its
/// category.
std::pair<const char *, const char *> slotPicture(bert::ParamSlotKind slot) {
  switch (slot) {
  case bert::ParamSlotKind::Value:
    return {"", "parameters"};
  case bert::ParamSlotKind::Master:
    return {" (master)", "master_weights"};
  case bert::ParamSlotKind::Grad:
    return {" (gradient)", "gradients"};
  case bert::ParamSlotKind::AdamM:
    return {" (Adam m)", "optimizer_state"};
  case bert::ParamSlotKind::AdamV:
    return {" (Adam v)", "optimizer_state"};
  case bert::ParamSlotKind::AdamMAbsmax:
    return {" (Adam m absmax)", "optimizer_state"};
  case bert::ParamSlotKind::AdamVAbsmax:
    return {" (Adam v absmax)", "optimizer_state"};
  }
  llvm_unreachable("a parameter slot without a picture");
}

} // namespace

MemoryPicture buildMemoryPicture(ModuleOp module, const StepMemory &memory, const PlanSummary &plan,
                                 StringRef title) {
  MemoryPicture picture;
  picture.title = title.str();
  picture.choices =
      llvm::formatv("micro-batch {0} x {1}, seq {2}, {3}, {4} AdamW state{5}{6}{7}{8}",
                    plan.microBatch, plan.accumulationSteps, plan.seqLen, plan.precisionLabel(),
                    plan.optimizerState, plan.optimizerInBackward ? ", AdamW in the backward" : "",
                    plan.optimizerOnHost ? ", optimizer in host memory (" +
                                               formatBytes(plan.optimizerHostBytes()) + ")"
                                         : "",
                    plan.hostCheckpointBytes > 0 ? ", checkpoints in host memory (" +
                                                       formatBytes(plan.hostCheckpointBytes) + ")"
                                                 : "",
                    plan.hostTableBytes > 0
                        ? ", embeddings in host memory (" + formatBytes(plan.hostTableBytes) + ")"
                        : "")
          .str();
  picture.budgetBytes = plan.budgetBytes;
  picture.arenaBytes = plan.arenaBytes;
  picture.lowerBoundBytes = plan.lowerBoundBytes;
  picture.peakBytes = plan.peakBytes();
  picture.hostBytes = plan.optimizerHostBytes();
  picture.hostPinnedBytes = plan.optimizerPinnedBytes();
  picture.hostCheckpointBytes = plan.hostCheckpointBytes;
  picture.offloadedCheckpoints = plan.offloadedCheckpoints;
  picture.hostTableBytes = plan.hostTableBytes;
  picture.hostTables = plan.hostTables;
  picture.hostFrozenMasterBytes = plan.hostFrozenMasterBytes;
  picture.peakStep = memory.peakStep;
  picture.stepSeconds = plan.estimatedStepSeconds;
  picture.device = plan.device;
  picture.stepTime = plan.stepTime;
  picture.steps = memory.steps;
  picture.categories = {
      {"parameters", plan.parameterBytes},   {"master_weights", plan.masterWeightBytes},
      {"gradients", plan.gradientBytes},     {"optimizer_state", plan.optimizerStateBytes},
      {"activations", plan.activationBytes}, {"temporaries", plan.temporaryBytes},
      {"workspace", plan.workspaceBytes},    {"reserve", plan.reserveBytes}};
  int64_t lastStep = std::max<int64_t>(int64_t(memory.steps.size()) - 1, 0);
  auto whole = [&](std::string name, std::string category, std::string shape, std::string dtype,
                   int64_t offset, int64_t bytes) {
    picture.blocks.push_back({std::move(name), std::move(category), std::move(shape),
                              std::move(dtype), "", "", offset, bytes, 0, lastStep});
  };
  for (const PlannedParam &param : memory.params)
    for (const PlannedParam::Slot &slot : param.slots) {
      if (slot.offset >= plan.arenaBytes)
        continue; // in host memory (an offloaded optimizer), not the device arena drawn
      auto [suffix, category] = slotPicture(slot.kind);
      bool absmax = slot.kind == bert::ParamSlotKind::AdamMAbsmax ||
                    slot.kind == bert::ParamSlotKind::AdamVAbsmax;
      whole(param.name + suffix, category,
            absmax ? "[" + std::to_string(slot.bytes / 4) + "]" : param.shape, slot.dtype,
            slot.offset, slot.bytes);
    }
  FailureOr<func::FuncOp> microStep = getMicroStep(module);
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (succeeded(microStep) && succeeded(bounds))
    microStep->walk([&](bert::InputOp input) {
      if (FailureOr<int64_t> offset = bert::getResultOffset(input->getResult(0)); succeeded(offset))
        whole(("input " + input.getName()).str(), "activations", "", "i32", *offset,
              boundedBytes(input.getResult().getType(), *bounds));
    });
  if (bert::PlanAttr plan = findPlan(module))
    if (bert::ByteRange scratch = plan.getScratch(); scratch.bytes > 0)
      whole("kernel scratch", "workspace", "", "f32", scratch.offset, scratch.bytes);
  for (const PlannedTensor &tensor : memory.tensors)
    picture.blocks.push_back({tensor.name, tensor.category, tensor.shape, tensor.dtype,
                              tensor.producer, tensor.origin, tensor.offset, tensor.bytes,
                              tensor.firstStep, tensor.lastStep});
  return picture;
}

} // namespace bertc
