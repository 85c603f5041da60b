// Internal to the CUDA kernels: grid sizing shared by the launchers.
#pragma once

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
