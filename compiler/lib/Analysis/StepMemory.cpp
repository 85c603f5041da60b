//===- StepMemory.cpp - what occupies the arena, step by step -------------===//

#include "bertc/Analysis/StepMemory.h"

#include "bertc/Analysis/RematChain.h"
#include "bertc/Analysis/StepLiveness.h"
#include "bertc/Analysis/TrainModule.h"
#include "bertc/abi/adamw_8bit_state.h"

#include <limits>

using namespace mlir;
using mlir::bert::getParamSlot;
using mlir::bert::getResultOffset;
using mlir::bert::kParamSlots;
using mlir::bert::ParamSlotKind;

namespace bertc {

void describeLocation(Location loc, std::string &name, std::string &origin) {
  if (auto named = dyn_cast<NameLoc>(loc)) {
    name = named.getName().str();
    loc = named.getChildLoc();
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    origin = (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
              Twine(file.getColumn()))
                 .str();
}

namespace {

std::string shapeText(RankedTensorType type, DimBounds bounds) {
  std::string text = "[";
  for (auto [i, dim] : llvm::enumerate(boundedShape(type, bounds)))
    text += (i ? ", " : "") + std::to_string(dim);
  return text + "]";
}

std::string dtypeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// How a parameter's value is stored: its element type, or its quantized format ("nf4").
std::string storageName(bert::ParamOp param) {
  if (bert::QuantizedWeightAttr quantized = param.getQuantizedAttr())
    return bert::stringifyWeightFormat(quantized.getFormat()).str();
  return dtypeText(param.getResult().getType().getElementType());
}

} // namespace

FailureOr<StepMemory> analyzeStepMemory(ModuleOp module) {
  FailureOr<func::FuncOp> microStep = getMicroStep(module);
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (failed(microStep) || failed(bounds))
    return failure();
  Block &body = microStep->getBody().front();
  // Every result of a forward op is forward, those the loss does not read too: attention's
  // log-sum-exp, a fused LayerNorm's sum.
  llvm::DenseSet<Operation *> forwardOps = forwardOpsOf(body);
  auto forward = [&](Value value) {
    Operation *def = value.getDefiningOp();
    return def && forwardOps.contains(def);
  };
  StepMemory memory;
  for (Operation &op : body)
    memory.steps.push_back(op.getName().getStringRef().str());
  llvm::StringMap<int64_t> eightBit = eightBitStateBlocks(module);
  // Slots from here on are in host memory (an offloaded optimizer's, frozen masters).
  bert::PlanAttr plan = findPlan(module);
  int64_t deviceBytes = plan ? plan.getDeviceBytes() : std::numeric_limits<int64_t>::max();
  microStep->walk([&](bert::ParamOp param) {
    PlannedParam planned;
    std::string locName;
    describeLocation(param.getLoc(), locName, planned.origin);
    planned.name = param.getName().str();
    planned.group = param.getGroup().str();
    planned.shape = shapeText(param.getValueType(), *bounds);
    planned.bytes = boundedBytes(param.getResult().getType(), *bounds);
    // A 16-bit parameter has an fp32 master; gradients are always fp32, and so are the
    // moments unless they are 8-bit codes with an fp32 absmax per block.
    int64_t count = param.getResult().getType().getNumElements();
    int64_t fp32Bytes = count * 4;
    int64_t blocks = eightBit.count(param.getName())
                         ? quantBlockCount(count, QuantBlockSize(eightBit.lookup(param.getName())))
                         : 0;
    auto slotBytes = [&](ParamSlotKind slot) -> std::pair<int64_t, std::string> {
      if (slot == ParamSlotKind::Value)
        return {planned.bytes, storageName(param)};
      if ((slot == ParamSlotKind::AdamM || slot == ParamSlotKind::AdamV) && blocks > 0)
        return {count, "u8"};
      if (slot == ParamSlotKind::AdamMAbsmax || slot == ParamSlotKind::AdamVAbsmax)
        return {blocks * 4, "f32"};
      return {fp32Bytes, "f32"};
    };
    for (ParamSlotKind slot : kParamSlots)
      if (FailureOr<int64_t> offset = getParamSlot(param, slot); succeeded(offset)) {
        auto [bytes, dtype] = slotBytes(slot);
        planned.slots.push_back({slot, *offset, bytes, dtype});
        if (*offset < deviceBytes)
          planned.totalBytes += bytes;
      }
    memory.params.push_back(std::move(planned));
  });
  llvm::stable_sort(memory.params, [](const PlannedParam &a, const PlannedParam &b) {
    return a.totalBytes > b.totalBytes;
  });

  std::vector<TensorLife> lives = activationLifetimes(body, *bounds);
  for (const TensorLife &life : lives) {
    auto result = cast<OpResult>(life.value);
    Operation *def = result.getOwner();
    FailureOr<int64_t> offset = getResultOffset(result);
    if (failed(offset))
      return def->emitError("op has no arena slots: run -bertc-plan-buffers first");
    PlannedTensor tensor;
    describeLocation(def->getLoc(), tensor.name, tensor.origin);
    bool keptForBackward =
        forward(life.value) && llvm::any_of(life.value.getUsers(), [&](Operation *user) {
          return user != body.getTerminator() &&
                 llvm::none_of(user->getResults(), [&](Value r) { return forward(r); });
        });
    // Past the forward: a gradient, or an activation recomputed or brought back there.
    if (!forward(life.value))
      tensor.name += def->hasAttr(kRecomputed)  ? "/recomputed"
                     : isa<bert::ReloadOp>(def) ? "/reloaded"
                                                : "/grad";
    if (def->getNumResults() > 1)
      tensor.name += "#" + std::to_string(result.getResultNumber());
    auto type = cast<RankedTensorType>(life.value.getType());
    tensor.category = keptForBackward ? "activations" : "temporaries";
    tensor.shape = shapeText(type, *bounds);
    tensor.dtype = dtypeText(type.getElementType());
    tensor.producer = def->getName().getStringRef().str();
    tensor.offset = *offset;
    tensor.bytes = life.interval.bytes;
    tensor.firstStep = life.interval.begin;
    tensor.lastStep = life.interval.end;
    memory.tensors.push_back(std::move(tensor));
  }

  // Live bytes per position by buffer (an in-place chain counts once): a difference
  // array over the buffers' intervals.
  std::vector<int64_t> delta(memory.steps.size() + 1, 0), savedDelta(delta.size(), 0);
  for (const StepBuffer &buffer : coalesceInPlace(lives)) {
    delta[buffer.interval.begin] += buffer.interval.bytes;
    delta[buffer.interval.end + 1] -= buffer.interval.bytes;
  }
  for (const PlannedTensor &tensor : memory.tensors)
    if (tensor.category == "activations") {
      savedDelta[tensor.firstStep] += tensor.bytes;
      savedDelta[tensor.lastStep + 1] -= tensor.bytes;
    }
  int64_t live = 0, saved = 0;
  for (size_t step = 0; step < memory.steps.size(); ++step) {
    live += delta[step];
    saved += savedDelta[step];
    if (live > memory.peakLiveBytes) {
      memory.peakLiveBytes = live;
      memory.peakStep = int64_t(step);
      memory.savedBytesAtPeak = saved;
    }
  }
  return memory;
}

std::vector<const PlannedTensor *> liveAt(const StepMemory &memory, int64_t step) {
  std::vector<const PlannedTensor *> live;
  for (const PlannedTensor &tensor : memory.tensors)
    if (tensor.firstStep <= step && step <= tensor.lastStep)
      live.push_back(&tensor);
  llvm::stable_sort(
      live, [](const PlannedTensor *a, const PlannedTensor *b) { return a->bytes > b->bytes; });
  return live;
}

} // namespace bertc
