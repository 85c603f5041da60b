// The simulated device's stand-in for CUDA's cuda_runtime.h (which nvcc includes in every
// .cu file, as the simulated build does with -include): the runtime API and device code.
#pragma once

#include "bertc/cuda_sim/device_code.h"
#include <cuda_runtime_api.h>

/// cudaFuncGetAttributes of a kernel named by its function, as CUDA's cuda_runtime.h has it.
template <typename Kernel>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attributes, Kernel *kernel) {
  return cudaFuncGetAttributes(attributes, reinterpret_cast<const void *>(kernel));
}
