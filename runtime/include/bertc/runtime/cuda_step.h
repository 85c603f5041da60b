// What a generated CUDA trainer (trainer.cu) defines beside kTrainerPlan, and what its step
// functions queue their work with. StepContext::arena is the device arena there.
#pragma once

#include "bertc/runtime/cuda_gemm.h"
#include "bertc/runtime/cuda_kernels.h"
#include "bertc/runtime/trainer_plan.h"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace bertc::cuda {

/// The device resources of a run, set up once before step 1.
struct StepDevice {
  cudaStream_t stream;           ///< every launch of a step is queued here, in order
  LinearGemms *gemms;            ///< on `stream`, its workspace at kGemmWorkspaceOffset
  const AdamWChunk *adamwChunks; ///< device copy of adamwChunks(kAdamWParameters)
  int64_t adamwChunkCount;
};

} // namespace bertc::cuda

/// Defined by the generated trainer: the trainable parameters for cuda::adamwChunks (values
/// at fp32 offsets from the arena, state at fp32 offsets from the gradients region, which
/// the two moment halves of the optimizer-state region parallel).
extern const bertc::cuda::AdamWParameter kAdamWParameters[];
extern const size_t kNumAdamWParameters;
/// Byte offset of the cuBLASLt workspace (kCublasLtWorkspaceBytes) in the arena.
extern const size_t kGemmWorkspaceOffset;
/// Byte offset and size of the optimizer's tables (cuda::optimizerTables) in the arena.
extern const size_t kOptimizerTablesOffset;
extern const size_t kOptimizerTablesBytes;
/// Forward and backward of one micro-batch on the device arena (see bertcMicroStep in
/// trainer_plan.h), queued on dev.stream.
void bertcMicroStep(const bertc::StepContext &ctx, const bertc::cuda::StepDevice &dev);
/// One AdamW update of every trainable parameter, queued on dev.stream.
void bertcOptimizerStep(const bertc::StepContext &ctx, const bertc::cuda::StepDevice &dev);
/// The micro-step's forward with dropout off (see bertcEvalStep in trainer_plan.h): writes
/// the loss in the device arena and copies the fp32 logits to the host array `logits`,
/// returning once they are there.
void bertcEvalStep(const bertc::StepContext &ctx, const bertc::cuda::StepDevice &dev,
                   float *logits);
