// LayerNorm row statistics alone: one warp per row, mean first, then the biased variance
// around it (two passes, as the CPU twin), in fp32.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {

constexpr int kRowsPerBlock = 8;

__device__ __forceinline__ float warpSum(float value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

template <typename T>
__global__ void layerNormStatisticsKernel(const T *x, float *mean, float *rstd, int64_t rows,
                                          int64_t cols, float eps) {
  const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (row >= rows)
    return;
  const T *in = x + row * cols;
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += 32)
    sum += loadFloat(in + c);
  const float mu = warpSum(sum) / float(cols);
  float squares = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += 32) {
    const float d = loadFloat(in + c) - mu;
    squares += d * d;
  }
  const float variance = warpSum(squares) / float(cols);
  if (threadIdx.x == 0) {
    mean[row] = mu;
    rstd[row] = 1.0f / sqrtf(variance + eps); // as layerNormForward computes it
  }
}

} // namespace

template <typename T>
void layerNormStatistics(const T *x, float *mean, float *rstd, int64_t rows, int64_t cols,
                         float eps, cudaStream_t stream) {
  const unsigned blocks = unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  BERTC_LAUNCH(layerNormStatisticsKernel, blocks > 0 ? blocks : 1, dim3(32, kRowsPerBlock), 0,
               stream, x, mean, rstd, rows, cols, eps);
}

template void layerNormStatistics(const float *, float *, float *, int64_t, int64_t, float,
                                  cudaStream_t);
template void layerNormStatistics(const bf16 *, float *, float *, int64_t, int64_t, float,
                                  cudaStream_t);
template void layerNormStatistics(const fp16 *, float *, float *, int64_t, int64_t, float,
                                  cudaStream_t);

} // namespace bertc::cuda
