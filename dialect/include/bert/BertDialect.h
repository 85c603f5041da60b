//===- BertDialect.h - the bert dialect -------------------------*- C++ -*-===//
//
// Declares the `bert` dialect, its attributes, its op interfaces and its ops.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "bert/BertAttributes.h"
#include "bert/BertDialect.h.inc"
#include "bert/KernelWork.h"

#define GET_ATTRDEF_CLASSES
#include "bert/BertAttributes.h.inc"

namespace mlir::bert {
/// The shape of `type` at a batch: its first dynamic dimension is the micro-batch
/// `batch`, the second the sequence length `seq`.
llvm::SmallVector<int64_t> shapeAt(RankedTensorType type, int64_t batch, int64_t seq);
/// Elements of a tensor type at (batch, seq) (0 for a type that is not a ranked tensor).
double numElementsAt(Type type, int64_t batch, int64_t seq);
/// Its bytes at those dimensions.
double bytesAt(Type type, int64_t batch, int64_t seq);
/// Bytes of every operand and result of `op` at (batch, seq), each once.
double operandAndResultBytes(Operation *op, int64_t batch, int64_t seq);
/// The CostOpInterface default: one kernel of bertc's own doing one flop per result
/// element and moving every operand and result once.
KernelWork elementwiseKernel(Operation *op, int64_t batch, int64_t seq);
/// Whether `root` holds plan-check instrumentation (BertPlanCheckOps.td).
bool hasPlanChecks(Operation *root);
/// Erases the plan-check instrumentation of `root`.
void erasePlanChecks(Operation *root);
} // namespace mlir::bert

#include "bert/BertInterfaces.h.inc"

#define GET_OP_CLASSES
#include "bert/BertOps.h.inc"
