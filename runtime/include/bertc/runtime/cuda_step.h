// What a generated CUDA trainer's steps (CudaSteps, bertc/abi/trainer.h) queue their work
// with. StepContext::arena is the device arena there.
#pragma once

#include "bertc/abi/trainer.h"
#include "bertc/runtime/cuda_gemm.h"
#include "bertc/runtime/cuda_kernels.h"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace bertc::cuda {

/// The device resources of a run, set up once before step 1.
struct StepDevice {
  cudaStream_t stream;           ///< every launch of a step is queued here, in order
  LinearGemms *gemms;            ///< on `stream`, its workspace at CudaSteps::gemmWorkspaceOffset
  const AdamWChunk *adamwChunks; ///< device copy of adamwChunks(CudaSteps::adamwParameters)
  int64_t adamwChunkCount;
};

} // namespace bertc::cuda
