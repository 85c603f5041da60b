//===- CpuEmitters.h - the CPU-only op emitters ------------------*- C++ -*-===//
//
// The op families whose CPU calls differ from the CUDA launches in more than the stream:
// the attention, which works in the arena's scratch region; and the plan checks, which
// only the CPU target's trainers make. The other families emit for both targets
// (EmitContext.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../EmitContext.h"

namespace bertc {

/// Writes the kernel calls of an attention op or its gradient (an OpEmitter: std::nullopt
/// for any other op).
std::optional<mlir::LogicalResult> emitAttentionOp(mlir::Operation *op, EmitContext &ctx);

/// Writes the plan checker's hook of a plan-check op (an OpEmitter: std::nullopt for any
/// other op).
std::optional<mlir::LogicalResult> emitPlanCheckOp(mlir::Operation *op, EmitContext &ctx);

} // namespace bertc
