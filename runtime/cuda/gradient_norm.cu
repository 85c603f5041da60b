// The global gradient norm for clipping: a sum of squares over the whole gradient region,
// then torch.nn.utils.clip_grad_norm_'s scaling, reading the norm on the device (no host
// round trip). The reduction is two fixed-shape passes so that its order, and hence its
// bits, never change from run to run:
//   1. block b sums the squares of elements b*256 + t, stepping by the grid, in double,
//      then its threads' sums in a fixed tree; partials[b] = that sum;
//   2. one warp adds the partials (lane l takes l, l + 32, ...) and reduces them.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "launch.cuh"
#include "warp_reduce.cuh"

namespace bertc::cuda {

namespace {
constexpr int kWarpSize = 32;
constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    squaredNormPartialsKernel(const float *x, int64_t n, double *partials) {
  double sum = 0.0;
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride())
    sum += double(x[i]) * double(x[i]);
  __shared__ double warpSums[kThreads / kWarpSize];
  sum = warpSum(sum);
  if (threadIdx.x % kWarpSize == 0)
    warpSums[threadIdx.x / kWarpSize] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int w = 0; w < kThreads / kWarpSize; ++w)
      total += warpSums[w];
    partials[blockIdx.x] = total;
  }
}

__global__ void squaredNormTotalKernel(const double *partials, int partialCount, float *result) {
  double sum = 0.0;
  for (int i = threadIdx.x; i < partialCount; i += kWarpSize)
    sum += partials[i];
  sum = warpSum(sum);
  if (threadIdx.x == 0)
    *result = float(sum);
}

__global__ void clipByGlobalNormKernel(float *grad, int64_t n, const float *squaredNormValue,
                                       float maxNorm) {
  const float clipCoefficient = fminf(maxNorm / (sqrtf(*squaredNormValue) + 1e-6f), 1.0f);
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride())
    grad[i] *= clipCoefficient;
}
} // namespace

void squaredNorm(const float *x, int64_t n, double *partials, float *result, cudaStream_t stream) {
  const unsigned blocks = std::min<unsigned>(gridFor(n, kThreads), kSquaredNormPartials);
  BERTC_LAUNCH(squaredNormPartialsKernel, blocks, kThreads, 0, stream, x, n, partials);
  BERTC_LAUNCH(squaredNormTotalKernel, 1, kWarpSize, 0, stream, partials, int(blocks), result);
}

void clipByGlobalNorm(float *grad, int64_t n, const float *squaredNormValue, float maxNorm,
                      cudaStream_t stream) {
  BERTC_LAUNCH(clipByGlobalNormKernel, gridFor(n), kElementwiseThreads, 0, stream, grad, n,
               squaredNormValue, maxNorm);
}

} // namespace bertc::cuda
