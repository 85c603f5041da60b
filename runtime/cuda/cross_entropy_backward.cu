// The softmax cross-entropy gradient alone (for cross_entropy_grad, whose forward already
// ran): one warp per row, the same double-precision arithmetic as cross_entropy.cu's fused
// kernel, so both give the same dlogits.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "launch.cuh"

#include <cmath>

namespace bertc::cuda {

namespace {

constexpr int kRowsPerBlock = 8;

__device__ __forceinline__ float warpMaxOf(float value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ __forceinline__ double warpSumOf(double value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__global__ void crossEntropyBackwardKernel(const float *dloss, const float *logits,
                                           const int32_t *labels, float *dlogits, int64_t batch,
                                           int64_t classes, float normalizer) {
  const int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (r >= batch)
    return;
  const int lane = threadIdx.x;
  const float *row = logits + r * classes;
  const int32_t label = labels[r];
  if (label < 0 || label >= classes) {
    for (int64_t c = lane; c < classes; c += 32)
      dlogits[r * classes + c] = 0.0f;
    return;
  }
  const double rowScale = double(*dloss) / double(normalizer);
  float rowMax = -INFINITY;
  for (int64_t c = lane; c < classes; c += 32)
    rowMax = fmaxf(rowMax, row[c]);
  rowMax = warpMaxOf(rowMax);
  double expSum = 0.0;
  for (int64_t c = lane; c < classes; c += 32)
    expSum += exp(double(row[c]) - double(rowMax));
  const double logSumShifted = log(warpSumOf(expSum));
  for (int64_t c = lane; c < classes; c += 32) {
    const double prob = exp(double(row[c]) - double(rowMax) - logSumShifted);
    dlogits[r * classes + c] = float(rowScale * (prob - (c == label ? 1.0 : 0.0)));
  }
}

} // namespace

void crossEntropyBackward(const float *dloss, const float *logits, const int32_t *labels,
                          float *dlogits, int64_t batch, int64_t classes, float normalizer,
                          cudaStream_t stream) {
  const unsigned blocks = unsigned((batch + kRowsPerBlock - 1) / kRowsPerBlock);
  BERTC_LAUNCH(crossEntropyBackwardKernel, blocks > 0 ? blocks : 1, dim3(32, kRowsPerBlock), 0,
               stream, dloss, logits, labels, dlogits, batch, classes, normalizer);
}

} // namespace bertc::cuda
