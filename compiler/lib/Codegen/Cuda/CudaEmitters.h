//===- CudaEmitters.h - the CUDA-only op emitters ----------------*- C++ -*-===//
//
// The op families whose CUDA launches differ from the CPU calls in more than the stream:
// the fused attention, whose backward keeps its row term in the op's kernel workspace. The other
// families emit for both targets (EmitContext.h, with KernelTarget::Cuda).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../EmitContext.h"

namespace bertc {

/// Writes the launches of an attention op or its gradient on the step's stream (an
/// OpEmitter: std::nullopt for any other op).
std::optional<mlir::LogicalResult> emitCudaAttentionOp(mlir::Operation *op, EmitContext &ctx);

} // namespace bertc
