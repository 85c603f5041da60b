//===- KernelWorkspace.h - arena bytes the CUDA kernels need per op -*- C++ -*-===//
//
// The CUDA LayerNorm kernels keep per-row statistics beside their outputs, the attention
// backward its row term, the tensor-core attention its [seq, seq] score blocks, and the bias and
// LayerNorm-parameter gradients sum their columns through partial sums. These bytes
// are planned in the arena's scratch region for both targets, so both run the same schedule.
// The CPU's fused attention works in a scratch of its own ([seq, seq] scores), which only the
// cpu target holds. The sizes come from bertc/abi/kernel_workspace.h, which the kernels use
// too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Analysis/TrainModule.h"
#include "mlir/IR/Operation.h"

#include <cstdint>

namespace bertc {

/// Bytes of the CUDA runtime's workspace: the GEMMs' (cuBLASLt's and their pointer arrays)
/// and the column sums' tickets (the generated trainer static_asserts that the runtime it is
/// built against agrees).
extern const int64_t kCudaGemmWorkspaceBytes;

/// Bytes of the CUDA runtime's optimizer tables (cuda::optimizerTables) for the trainable
/// parameters of `microStep` with fp32 moments (those with 8-bit state are updated on their
/// own); with the optimizer on the host, the tables without chunks.
int64_t cudaOptimizerTablesBytes(mlir::func::FuncOp microStep);

/// Bytes `op` needs beside its operands and results on the CUDA target at the plan's
/// bounds (0 for ops that need none):
///   attention        with head_chunk > 0, a block of head_chunk heads' scores
///                    (cuda::attentionForwardWorkspaceBytes);
///   attention_grad   with head_chunk 0, each query row's dctx·ctx (fp32) and, with
///                    dropout, its mask bits; with head_chunk > 0 two score blocks
///                    (cuda::attentionBackwardWorkspaceBytes);
///   layernorm        each row's mean and reciprocal standard deviation (fp32);
///   layernorm_grad   the same, then the partial sums of dgamma and dbeta
///                    (cuda::layerNormBackwardWorkspaceFloats);
///   bias_grad        the partial column sums (cuda::biasBackwardWorkspaceFloats);
///   lm_head_loss     a [token_chunk, vocab] fp32 logits block, then a loss per token
///                    (bertc/abi/lm_head_loss.h); its gradients, the block alone.
int64_t kernelWorkspaceBytes(mlir::Operation *op, DimBounds bounds);

/// Bytes of the scratch the CPU's fused attention kernels (head_chunk 0) of `microStep` work
/// in at the plan's bounds (cpu::attentionScratchFloats, the most of any); 0 without one.
/// The scratch region of a plan a CPU trainer runs begins with them.
int64_t cpuAttentionScratchBytes(mlir::func::FuncOp microStep, DimBounds bounds);

} // namespace bertc
