//===- BertDialect.h - the bert dialect -------------------------*- C++ -*-===//
//
// Declares the `bert` dialect, its op interfaces and its ops.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "bert/BertDialect.h.inc"

namespace mlir::bert {
/// The shape of `type` at a batch: its first dynamic dimension is the micro-batch
/// `batch`, the second the sequence length `seq`.
llvm::SmallVector<int64_t> shapeAt(RankedTensorType type, int64_t batch, int64_t seq);
/// Elements of a tensor type at (batch, seq) (0 for a type that is not a ranked tensor).
double numElementsAt(Type type, int64_t batch, int64_t seq);
/// Its bytes at those dimensions.
double bytesAt(Type type, int64_t batch, int64_t seq);
} // namespace mlir::bert

#include "bert/BertInterfaces.h.inc"

#define GET_OP_CLASSES
#include "bert/BertOps.h.inc"
