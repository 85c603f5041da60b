//===- TrainModule.cpp - accessors of a bertc training module -------------===//

#include "bertc/Analysis/TrainModule.h"

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

FailureOr<double> getTrainNumber(ModuleOp module, StringRef key) {
  auto train = module->getAttrOfType<DictionaryAttr>("bert.train");
  if (!train)
    return module.emitError("training module has no 'bert.train' settings");
  Attribute value = train.get(key);
  if (auto f = dyn_cast_or_null<FloatAttr>(value))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(value))
    return double(i.getInt());
  return module.emitError() << "'bert.train' has no numeric setting '" << key << "'";
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

ArenaRange getPlanRegion(ModuleOp module, StringRef key) {
  auto plan = module->getAttrOfType<DictionaryAttr>("bert.plan");
  auto region = plan ? dyn_cast_or_null<DenseI64ArrayAttr>(plan.get(key)) : nullptr;
  if (!region || region.size() != 2)
    return {};
  return {region[0], region[1]};
}

int64_t getPlanInteger(ModuleOp module, StringRef key) {
  auto plan = module->getAttrOfType<DictionaryAttr>("bert.plan");
  auto value = plan ? dyn_cast_or_null<IntegerAttr>(plan.get(key)) : nullptr;
  return value ? value.getInt() : 0;
}

int64_t accumulationSteps(ModuleOp module, DimBounds bounds) {
  auto train = module->getAttrOfType<DictionaryAttr>("bert.train");
  auto batch = train ? dyn_cast_or_null<IntegerAttr>(train.get("batch")) : nullptr;
  int64_t effective = batch ? batch.getInt() : bounds.maxBatch;
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

} // namespace bertc
