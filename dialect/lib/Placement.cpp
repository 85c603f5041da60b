//===- Placement.cpp - the accessors and verifier of a plan's offsets ----===//

#include "bert/Placement.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::bert;

namespace {

/// The slots of `attr` by ParamSlotKind, each present or not.
std::array<std::optional<int64_t>, std::size(kParamSlots)> slotsOf(ParamSlotsAttr attr) {
  return {attr.getValue(), attr.getMaster(),      attr.getGrad(),       attr.getAdamM(),
          attr.getAdamV(), attr.getAdamMAbsmax(), attr.getAdamVAbsmax()};
}

} // namespace

StringRef mlir::bert::slotName(ParamSlotKind slot) {
  static constexpr StringLiteral names[] = {"value",  "master",        "grad",         "adam_m",
                                            "adam_v", "adam_m_absmax", "adam_v_absmax"};
  return names[size_t(slot)];
}

FailureOr<int64_t> mlir::bert::getParamSlot(ParamOp param, ParamSlotKind slot) {
  auto attr = param->getAttrOfType<ParamSlotsAttr>(kParamSlotsAttr);
  if (!attr)
    return failure();
  std::optional<int64_t> offset = slotsOf(attr)[size_t(slot)];
  if (!offset)
    return failure();
  return *offset;
}

void mlir::bert::setParamSlot(ParamOp param, ParamSlotKind slot, int64_t offset) {
  auto attr = param->getAttrOfType<ParamSlotsAttr>(kParamSlotsAttr);
  assert((attr || slot == ParamSlotKind::Value) && "a parameter's value is placed first");
  auto slots = attr ? slotsOf(attr) : decltype(slotsOf(attr)){};
  slots[size_t(slot)] = offset;
  param->setAttr(kParamSlotsAttr,
                 ParamSlotsAttr::get(param.getContext(), slots[0].value_or(0), slots[1], slots[2],
                                     slots[3], slots[4], slots[5], slots[6]));
}

void mlir::bert::copyParamSlots(ParamOp param, ParamOp placed) {
  if (Attribute slots = placed->getAttr(kParamSlotsAttr))
    param->setAttr(kParamSlotsAttr, slots);
}

FailureOr<int64_t> mlir::bert::getResultOffset(OpResult result) {
  auto offsets = result.getOwner()->getAttrOfType<DenseI64ArrayAttr>(kResultOffsetsAttr);
  if (!offsets || int64_t(result.getResultNumber()) >= offsets.size())
    return failure();
  return offsets[result.getResultNumber()];
}

void mlir::bert::setResultOffsets(Operation *op, ArrayRef<int64_t> offsets) {
  op->setAttr(kResultOffsetsAttr, DenseI64ArrayAttr::get(op->getContext(), offsets));
}

bool mlir::bert::valueInHostMemory(ParamOp param) {
  auto module = param->getParentOfType<ModuleOp>();
  auto plan = module ? module->getAttrOfType<PlanAttr>("bert.plan") : PlanAttr();
  FailureOr<int64_t> value = getParamSlot(param, ParamSlotKind::Value);
  if (!plan || failed(value))
    return false;
  ByteRange tables = plan.getHostParameters();
  return tables.bytes > 0 && *value >= tables.offset && *value < tables.end();
}

FailureOr<int64_t> mlir::bert::getWorkspaceOffset(Operation *op) {
  auto offset = op->getAttrOfType<IntegerAttr>(kWorkspaceAttr);
  if (!offset)
    return failure();
  return offset.getInt();
}

void mlir::bert::setWorkspaceOffset(Operation *op, int64_t offset) {
  op->setAttr(kWorkspaceAttr, IntegerAttr::get(IntegerType::get(op->getContext(), 64), offset));
}

LogicalResult mlir::bert::verifyPlacementAttribute(Operation *op, NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  if (name == kParamSlotsAttr) {
    if (!isa<ParamOp>(op) || !isa<ParamSlotsAttr>(value))
      return op->emitOpError() << "'" << name << "' must be a #bert.param_slots on a bert.param";
    return success();
  }
  if (name == kResultOffsetsAttr) {
    auto offsets = dyn_cast<DenseI64ArrayAttr>(value);
    if (!offsets || offsets.size() != int64_t(op->getNumResults()))
      return op->emitOpError() << "'" << name << "' must be an array<i64> of "
                               << op->getNumResults() << " offsets, one per result";
    if (llvm::any_of(offsets.asArrayRef(), [](int64_t offset) { return offset < 0; }))
      return op->emitOpError() << "'" << name << "' must hold offsets of at least 0";
    return success();
  }
  if (name == kWorkspaceAttr) {
    auto offset = dyn_cast<IntegerAttr>(value);
    if (!offset || !offset.getType().isInteger(64) || offset.getInt() < 0)
      return op->emitOpError() << "'" << name << "' must be an i64 offset of at least 0";
  }
  return success();
}
