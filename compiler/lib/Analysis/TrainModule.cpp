//===- TrainModule.cpp - accessors of a bertc training module -------------===//

#include "bertc/Analysis/TrainModule.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace bertc {

FailureOr<func::FuncOp> getMicroStep(ModuleOp module) {
  if (auto func = module.lookupSymbol<func::FuncOp>(kMicroStep))
    return func;
  return module.emitError("training module has no @micro_step function");
}

FailureOr<func::FuncOp> getOptimizerStep(ModuleOp module) {
  if (auto func = module.lookupSymbol<func::FuncOp>(kOptimizerStep))
    return func;
  return module.emitError("module has no @optimizer_step: run -bertc-insert-optimizer");
}

FailureOr<bert::TrainAttr> getTrainSettings(ModuleOp module) {
  if (auto train = module->getAttrOfType<bert::TrainAttr>("bert.train"))
    return train;
  return module.emitError("training module has no 'bert.train' settings");
}

bert::PlanAttr findPlan(ModuleOp module) {
  return module->getAttrOfType<bert::PlanAttr>("bert.plan");
}

FailureOr<bert::PlanAttr> getPlan(ModuleOp module) {
  if (bert::PlanAttr plan = findPlan(module))
    return plan;
  return module.emitError("module has no memory plan: run -bertc-plan-buffers");
}

FailureOr<DimBounds> getDimBounds(ModuleOp module) {
  auto batch = module->getAttrOfType<IntegerAttr>("bert.max_batch");
  auto seq = module->getAttrOfType<IntegerAttr>("bert.max_seq");
  if (!batch || !seq)
    return module.emitError("training module needs 'bert.max_batch' and 'bert.max_seq'");
  DimBounds bounds{batch.getInt(), seq.getInt()};
  if (bounds.maxBatch < 1 || bounds.maxSeq < 1)
    return module.emitError("'bert.max_batch' and 'bert.max_seq' must be positive");
  // A job read from TOML stays far below this; an .mlir stage may hold any shape.
  WalkResult tooLarge = module.walk([&](Operation *op) {
    SmallVector<Type> types(op->getResultTypes());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        llvm::append_range(types, block.getArgumentTypes());
    for (Type type : types) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.getElementType().isIntOrFloat())
        continue;
      int64_t bytes = elementBytes(tensor.getElementType());
      for (int64_t dim : boundedShape(tensor, bounds))
        if (dim < 0 || __builtin_mul_overflow(bytes, dim, &bytes) || bytes > kMaxTensorBytes) {
          op->emitError() << "a result of type " << type << " would take more than 2^48 bytes "
                          << "at micro-batch " << bounds.maxBatch << " and sequence "
                          << bounds.maxSeq << ", more than a plan holds";
          return WalkResult::interrupt();
        }
    }
    return WalkResult::advance();
  });
  if (tooLarge.wasInterrupted())
    return failure();
  return bounds;
}

SmallVector<int64_t> boundedShape(RankedTensorType type, DimBounds bounds) {
  return bert::shapeAt(type, bounds.maxBatch, bounds.maxSeq);
}

int64_t elementBytes(Type type) { return (type.getIntOrFloatBitWidth() + 7) / 8; }

int64_t boundedBytes(RankedTensorType type, DimBounds bounds) {
  int64_t bytes = elementBytes(type.getElementType());
  for (int64_t dim : boundedShape(type, bounds))
    bytes *= dim;
  return bytes;
}

int64_t accumulationSteps(ModuleOp module, DimBounds bounds) {
  auto train = module->getAttrOfType<bert::TrainAttr>("bert.train");
  int64_t effective = train ? train.getValues().batch : bounds.maxBatch;
  return (effective + bounds.maxBatch - 1) / bounds.maxBatch;
}

SmallVector<bert::ParamOp> trainableParams(func::FuncOp microStep) {
  SmallVector<bert::ParamOp> params;
  microStep.walk([&](bert::ParamOp param) {
    if (param.getTrainable())
      params.push_back(param);
  });
  return params;
}

namespace {

/// Calls `visit` with every `bert.adamw` of the step functions and the name of the
/// parameter it updates.
void forEachUpdate(ModuleOp module,
                   llvm::function_ref<void(bert::AdamWOp, llvm::StringRef)> visit) {
  for (llvm::StringRef step : {kMicroStep, kOptimizerStep})
    if (auto function = module.lookupSymbol<func::FuncOp>(step))
      function.walk([&](bert::AdamWOp adamw) {
        if (auto param = adamw.getParam().getDefiningOp<bert::ParamOp>())
          visit(adamw, param.getName());
      });
}

} // namespace

bool isLoraAdapterParam(llvm::StringRef name) {
  return name.ends_with(".lora_A.weight") || name.ends_with(".lora_B.weight");
}

bool isHostEmbeddingTable(bert::ParamOp param) {
  if (param.getTrainable() || param.getQuantized() || param.getResult().use_empty())
    return false;
  return llvm::all_of(param.getResult().getUsers(),
                      [](Operation *user) { return isa<bert::EmbeddingOp>(user); });
}

bool keepsFp32Master(bert::ParamOp param) {
  Type element = param.getResult().getType().getElementType();
  if (!element.isBF16() && !element.isF16())
    return false;
  auto module = param->getParentOfType<ModuleOp>();
  return param.getTrainable() || !(module && module->hasAttr("bert.adapter_config")) ||
         isLoraAdapterParam(param.getName());
}

llvm::StringMap<int64_t> eightBitStateBlocks(ModuleOp module) {
  llvm::StringMap<int64_t> blocks;
  forEachUpdate(module, [&](bert::AdamWOp adamw, llvm::StringRef name) {
    if (std::optional<int64_t> block = adamw.getStateBlock())
      blocks[name] = *block;
  });
  return blocks;
}

llvm::StringSet<> updatesInBackward(ModuleOp module) {
  llvm::StringSet<> names;
  forEachUpdate(module, [&](bert::AdamWOp adamw, llvm::StringRef name) {
    if (adamw.getGrad())
      names.insert(name);
  });
  return names;
}

bool optimizerOnHost(ModuleOp module) { return module->hasAttr(kOptimizerOnHost); }

bool timesOps(ModuleOp module) { return module->hasAttr(kTimeOps); }

bool usesLossScaling(ModuleOp module) {
  bool scaled = false;
  module.walk([&](bert::FillOp fill) { scaled |= fill.getLossScaled(); });
  return scaled;
}

bool streamsGradients(ModuleOp module) {
  auto train = module->getAttrOfType<bert::TrainAttr>("bert.train");
  return optimizerOnHost(module) && !usesLossScaling(module) &&
         !(train && train.getValues().maxGradNorm > 0);
}

/// The host-resident end up to the offloaded checkpoints, the embedding tables and the
/// frozen masters (which follow it): the offloaded optimizer's masters and state.
static int64_t hostOptimizerBytes(bert::PlanAttr plan) {
  int64_t end = plan.getArenaBytes();
  for (bert::ByteRange after :
       {plan.getHostActivations(), plan.getHostParameters(), plan.getFrozenMasters()})
    if (after.bytes > 0)
      end = std::min(end, after.offset);
  return end - plan.getDeviceBytes();
}

/// The host copies of the gradients and parameters an offloaded optimizer moves each step.
static int64_t optimizerCopyBytes(bert::PlanAttr plan) {
  return hostOptimizerBytes(plan) == 0 ? 0 : plan.getGradients().bytes + plan.getParameters().bytes;
}

int64_t offloadPinnedBytes(bert::PlanAttr plan, bool hostCopies) {
  return hostCopies ? optimizerCopyBytes(plan) + plan.getHostActivations().bytes +
                          plan.getHostParameters().bytes
                    : 0;
}

int64_t offloadHostBytes(bert::PlanAttr plan, bool hostCopies) {
  return hostOptimizerBytes(plan) + plan.getHostActivations().bytes +
         plan.getHostParameters().bytes + (hostCopies ? optimizerCopyBytes(plan) : 0);
}

bool hasTf32Gemms(ModuleOp module) {
  WalkResult found = module.walk([](Operation *op) {
    bool tf32 =
        llvm::TypeSwitch<Operation *, bool>(op)
            .Case<bert::LinearOp, bert::LinearGradInputOp, bert::LinearGradInputAddOp,
                  bert::LinearGradWeightOp, bert::AccumulateLinearGradWeightOp, bert::AttentionOp,
                  bert::AttentionGradOp>([](auto gemm) { return gemm.getTf32(); })
            .Default([](Operation *) { return false; });
    return tf32 ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found.wasInterrupted();
}

int64_t lmHeadTokenChunk(ModuleOp module) {
  int64_t tokenChunk = 0;
  module.walk([&](bert::LmHeadLossOp op) {
    tokenChunk = std::max(tokenChunk, int64_t(op.getTokenChunk()));
  });
  return tokenChunk;
}

int64_t attentionHeadChunk(ModuleOp module) {
  int64_t headChunk = 0;
  module.walk(
      [&](bert::AttentionOp op) { headChunk = std::max(headChunk, int64_t(op.getHeadChunk())); });
  return headChunk;
}

} // namespace bertc
