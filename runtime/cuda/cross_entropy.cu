// Softmax cross-entropy on the GPU, fused with its gradient. One block: warp w takes rows
// w, w + 32, ...; each row's log-softmax is logit - max - log(sum exp(logit - max)) with the
// sums in double, as the CPU twin (loss.cpp). Each warp adds its rows' losses in row order
// and thread 0 adds the warps' totals in warp order, so the loss is deterministic. The
// classification losses this serves are a few thousand rows at most, for which one block
// is enough.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "launch.cuh"
#include "warp_reduce.cuh"

namespace bertc::cuda {

namespace {
constexpr int kWarpSize = 32;
constexpr int kWarps = 32;

/// dlogits == nullptr: the loss only.
__global__ void __launch_bounds__(kWarps *kWarpSize)
    crossEntropyKernel(const float *logits, const int32_t *labels, float *loss, const float *dloss,
                       float *dlogits, int64_t batch, int64_t classes, float normalizer) {
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const double rowScale = dlogits ? double(*dloss) / double(normalizer) : 0.0;
  double warpLoss = 0.0;
  for (int64_t r = warp; r < batch; r += kWarps) {
    const float *row = logits + r * classes;
    const int32_t label = labels[r];
    const bool ignored = label < 0 || label >= classes;
    if (ignored) {
      if (dlogits)
        for (int64_t c = lane; c < classes; c += kWarpSize)
          dlogits[r * classes + c] = 0.0f;
      continue;
    }
    float rowMax = -INFINITY;
    for (int64_t c = lane; c < classes; c += kWarpSize)
      rowMax = fmaxf(rowMax, row[c]);
    rowMax = warpMax(rowMax);
    double expSum = 0.0;
    for (int64_t c = lane; c < classes; c += kWarpSize)
      expSum += exp(double(row[c]) - double(rowMax));
    const double logSumShifted = log(warpSum(expSum));
    warpLoss += logSumShifted - (double(row[label]) - double(rowMax));
    if (dlogits)
      for (int64_t c = lane; c < classes; c += kWarpSize) {
        const double prob = exp(double(row[c]) - double(rowMax) - logSumShifted);
        dlogits[r * classes + c] = float(rowScale * (prob - (c == label ? 1.0 : 0.0)));
      }
  }
  __shared__ double warpLosses[kWarps];
  if (lane == 0)
    warpLosses[warp] = warpLoss;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int w = 0; w < kWarps; ++w)
      total += warpLosses[w];
    *loss = float(total / double(normalizer));
  }
}
} // namespace

void crossEntropyForward(const float *logits, const int32_t *labels, float *loss, int64_t batch,
                         int64_t classes, float normalizer, cudaStream_t stream) {
  BERTC_LAUNCH(crossEntropyKernel, 1, kWarps * kWarpSize, 0, stream, logits, labels, loss, nullptr,
               nullptr, batch, classes, normalizer);
}

void crossEntropyForwardBackward(const float *logits, const int32_t *labels, float *loss,
                                 const float *dloss, float *dlogits, int64_t batch, int64_t classes,
                                 float normalizer, cudaStream_t stream) {
  BERTC_LAUNCH(crossEntropyKernel, 1, kWarps * kWarpSize, 0, stream, logits, labels, loss, dloss,
               dlogits, batch, classes, normalizer);
}

} // namespace bertc::cuda
