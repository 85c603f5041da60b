//===- CudaEmitters.h - CUDA launches of the ops, by family ------*- C++ -*-===//
//
// The CUDA twins of EmitContext.h's op emitters: each writes the launches of one op on
// the step's stream (`dev.stream`), GEMMs through `dev.gemms` (cuda_gemm.h), everything
// else through the runtime's launchers (cuda_kernels.h). Tensor
// names and sizes come from the shared EmitContext.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../EmitContext.h"

namespace bertc {

/// Each writes the launches of one op and returns failure (without a diagnostic) when
/// `op` is not of its family.
mlir::LogicalResult emitCudaGemmOp(mlir::Operation *op, EmitContext &ctx);
mlir::LogicalResult emitCudaAttentionOp(mlir::Operation *op, EmitContext &ctx);
/// Loss and gradient accumulation; AdamW is CudaTrainer's (one launch for every parameter).
mlir::LogicalResult emitCudaLossOp(mlir::Operation *op, EmitContext &ctx);

} // namespace bertc
