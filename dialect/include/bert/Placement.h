//===- Placement.h - where the memory plan put each tensor ------*- C++ -*-===//
//
// -bertc-plan-buffers places every tensor of a step at a byte offset of the arena: each
// parameter's slots (`bert.slots`, a #bert.param_slots), each op's results (`bert.offsets`,
// one i64 per result) and the kernel workspace of an op that needs one (`bert.workspace`).
// The dialect verifies these attributes (BertDialect::verifyOperationAttribute); passes and
// codegen reach them only through the accessors here, which fail where the plan placed
// nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bert/BertDialect.h"

#include "mlir/Support/LogicalResult.h"

namespace mlir::bert {

/// The attribute names of the placement.
inline constexpr llvm::StringLiteral kParamSlotsAttr = "bert.slots";
inline constexpr llvm::StringLiteral kResultOffsetsAttr = "bert.offsets";
inline constexpr llvm::StringLiteral kWorkspaceAttr = "bert.workspace";

/// A parameter's slots: its value, its fp32 master (16-bit storage), its fp32 gradient
/// and AdamW moments (trainable), and its moments' absmaxes (8-bit state).
enum class ParamSlotKind { Value, Master, Grad, AdamM, AdamV, AdamMAbsmax, AdamVAbsmax };
inline constexpr ParamSlotKind kParamSlots[] = {
    ParamSlotKind::Value,      ParamSlotKind::Master, ParamSlotKind::Grad,
    ParamSlotKind::AdamM,      ParamSlotKind::AdamV,  ParamSlotKind::AdamMAbsmax,
    ParamSlotKind::AdamVAbsmax};
/// The slot's key in #bert.param_slots ("value", "adam_m_absmax", ...).
llvm::StringRef slotName(ParamSlotKind slot);

/// The offset of `param`'s `slot`, or failure when the plan gave it none.
FailureOr<int64_t> getParamSlot(ParamOp param, ParamSlotKind slot);
inline bool hasParamSlot(ParamOp param, ParamSlotKind slot) {
  return succeeded(getParamSlot(param, slot));
}
/// Places `param`'s `slot` at `offset`; a slot other than the value needs the value's first.
void setParamSlot(ParamOp param, ParamSlotKind slot, int64_t offset);
/// Gives `param` the slots of `placed` (the same parameter in another step function).
void copyParamSlots(ParamOp param, ParamOp placed);
/// Whether `param`'s value lies in its module's #bert.plan host_parameters (an embedding
/// table in host memory, which the device reads in place).
bool valueInHostMemory(ParamOp param);

/// The offset of `result`, or failure when the plan placed no result of its op.
FailureOr<int64_t> getResultOffset(OpResult result);
/// Places `op`'s results at `offsets`, one per result.
void setResultOffsets(Operation *op, llvm::ArrayRef<int64_t> offsets);

/// The offset of `op`'s kernel workspace, or failure when it has none.
FailureOr<int64_t> getWorkspaceOffset(Operation *op);
inline bool hasWorkspace(Operation *op) { return succeeded(getWorkspaceOffset(op)); }
void setWorkspaceOffset(Operation *op, int64_t offset);

/// Checks one of the attributes above on `op` (the dialect's attribute verifier).
LogicalResult verifyPlacementAttribute(Operation *op, NamedAttribute attribute);

} // namespace mlir::bert
