// Internal to the CUDA kernels: the launch macro and the grid sizing shared by the
// launchers.
#pragma once

#include "bertc/runtime/cuda_check.h"

#if defined(BERTC_CUDA_SIM)
#include "bertc/cuda_sim/launch.h"
#endif

#include <algorithm>
#include <cstdint>

namespace bertc::cuda {

/// Threads per block of the elementwise kernels.
constexpr int kElementwiseThreads = 256;

/// Blocks for a grid-stride loop over n elements: enough to fill any current GPU, never more
/// than the elements need (a grid-stride loop is correct for any count).
inline unsigned gridFor(int64_t n, int threadsPerBlock = kElementwiseThreads) {
  constexpr int64_t kMaxBlocks = 65536;
  const int64_t blocks = (n + threadsPerBlock - 1) / threadsPerBlock;
  return unsigned(std::max<int64_t>(1, std::min(blocks, kMaxBlocks)));
}

/// First index and stride of the calling thread in a 1-D grid-stride loop.
__device__ __forceinline__ int64_t gridStrideBegin() {
  return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t gridStride() { return int64_t(gridDim.x) * blockDim.x; }

} // namespace bertc::cuda

/// Launches a kernel and checks the launch (checkLaunch, cuda_check.h):
/// BERTC_LAUNCH(kernel, grid, block, sharedBytes, stream, arguments...), with a template's
/// name in parentheses when its argument list holds commas. Under nvcc the launch is
/// `kernel<<<grid, block, sharedBytes, stream>>>(arguments...)`; on the simulated device
/// (BERTC_CUDA_SIM) the same kernel runs on the host, one fiber per thread.
#if defined(BERTC_CUDA_SIM)
#define BERTC_LAUNCH_KERNEL(kernel, grid, block, sharedBytes, stream, ...)                         \
  ::bertc::sim::launchKernel(                                                                      \
      {#kernel, grid, block, sharedBytes, stream},                                                 \
      [](auto... arguments) { kernel(arguments...); }, __VA_ARGS__)
#else
#define BERTC_LAUNCH_KERNEL(kernel, grid, block, sharedBytes, stream, ...)                         \
  kernel<<<grid, block, sharedBytes, stream>>>(__VA_ARGS__)
#endif
#define BERTC_LAUNCH(kernel, ...)                                                                  \
  (BERTC_LAUNCH_KERNEL(kernel, __VA_ARGS__),                                                       \
   ::bertc::cuda::checkLaunch(#kernel, __FILE__, __LINE__))
