// The regression head's loss, as the CPU twin (mse_loss.cpp): squared errors summed in
// double by one block in a fixed order (a rerun gives the same bits), and its gradient.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "launch.cuh"

namespace bertc::cuda {

namespace {

constexpr int kLossThreads = 256;

__global__ void __launch_bounds__(kLossThreads)
    mseLossForwardKernel(const float *predictions, const float *targets, float *loss, int64_t rows,
                         float normalizer) {
  __shared__ double partial[kLossThreads];
  double sum = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += kLossThreads) {
    const double error = double(predictions[r]) - double(targets[r]);
    sum += error * error;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kLossThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half)
      partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    *loss = float(partial[0] / double(normalizer));
}

__global__ void mseLossBackwardKernel(const float *dloss, const float *predictions,
                                      const float *targets, float *dpredictions, int64_t rows,
                                      float normalizer) {
  const double scale = 2.0 * double(*dloss) / double(normalizer);
  for (int64_t r = gridStrideBegin(); r < rows; r += gridStride())
    dpredictions[r] = float(scale * (double(predictions[r]) - double(targets[r])));
}

} // namespace

void mseLossForward(const float *predictions, const float *targets, float *loss, int64_t rows,
                    float normalizer, cudaStream_t stream) {
  BERTC_LAUNCH(mseLossForwardKernel, 1, kLossThreads, 0, stream, predictions, targets, loss, rows,
               normalizer);
}

void mseLossBackward(const float *dloss, const float *predictions, const float *targets,
                     float *dpredictions, int64_t rows, float normalizer, cudaStream_t stream) {
  BERTC_LAUNCH(mseLossBackwardKernel, gridFor(rows), kElementwiseThreads, 0, stream, dloss,
               predictions, targets, dpredictions, rows, normalizer);
}

} // namespace bertc::cuda
