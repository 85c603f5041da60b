// Selecting one token's vector per row ([CLS] for the pooler), the mean or the maximum over a
// row's real tokens (mean and max pooling), and their gradients: grid-stride loops over the
// output, and for the mean and maximum a block a row (the mean counts the row's tokens once).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"
#include "bertc/runtime/max_token.h"

#include "device_storage.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {

template <typename T>
__global__ void selectTokenForwardKernel(const T *x, T *out, int64_t batch, int64_t seq,
                                         int64_t hidden, int64_t index) {
  for (int64_t i = gridStrideBegin(); i < batch * hidden; i += gridStride())
    out[i] = x[((i / hidden) * seq + index) * hidden + i % hidden];
}

template <typename T>
__global__ void selectTokenBackwardKernel(const T *dout, T *dx, int64_t batch, int64_t seq,
                                          int64_t hidden, int64_t index) {
  for (int64_t i = gridStrideBegin(); i < batch * seq * hidden; i += gridStride()) {
    const int64_t token = (i / hidden) % seq;
    dx[i] = token == index ? dout[(i / (seq * hidden)) * hidden + i % hidden]
                           : T{}; // all-zero bits: +0 in every storage type
  }
}

/// The count of a row's real tokens, at least 1 (cpu::meanTokensForward's), counted once by
/// the block's threads together (every thread of the block must call it).
__device__ float realTokens(const int32_t *mask, int64_t seq) {
  int64_t count = 0;
  for (int64_t first = 0; first < seq; first += blockDim.x) {
    const int64_t s = first + threadIdx.x;
    count += __syncthreads_count(s < seq && mask[s] != 0);
  }
  return float(count > 1 ? count : 1);
}

// A block a row. The same sum order as the CPU's, token after token, so the results are the
// same bits.
template <typename T>
__global__ void meanTokensForwardKernel(const T *x, const int32_t *mask, T *out, int64_t seq,
                                        int64_t hidden) {
  const int64_t b = blockIdx.x;
  const float count = realTokens(mask + b * seq, seq);
  for (int64_t h = threadIdx.x; h < hidden; h += blockDim.x) {
    float sum = 0.0f;
    for (int64_t s = 0; s < seq; ++s)
      if (mask[b * seq + s] != 0)
        sum += loadFloat(x + (b * seq + s) * hidden + h);
    storeRounded(out + b * hidden + h, sum / count);
  }
}

template <typename T>
__global__ void meanTokensBackwardKernel(const T *dy, const int32_t *mask, T *dx, int64_t seq,
                                         int64_t hidden) {
  const int64_t b = blockIdx.x;
  const float count = realTokens(mask + b * seq, seq);
  for (int64_t i = threadIdx.x; i < seq * hidden; i += blockDim.x)
    storeRounded(dx + b * seq * hidden + i, mask[b * seq + i / hidden] != 0
                                                ? loadFloat(dy + b * hidden + i % hidden) / count
                                                : 0.0f);
}

template <typename T>
__global__ void maxTokensForwardKernel(const T *x, const int32_t *mask, T *out, int64_t seq,
                                       int64_t hidden) {
  const int64_t b = blockIdx.x;
  for (int64_t h = threadIdx.x; h < hidden; h += blockDim.x) {
    const int64_t s = maxToken(x, mask, b, seq, hidden, h);
    out[b * hidden + h] = s < 0 ? T{} : x[(b * seq + s) * hidden + h];
  }
}

// Each thread finds its features' tokens, then writes their whole column of dx: zeros and
// the one gradient.
template <typename T>
__global__ void maxTokensBackwardKernel(const T *dy, const T *x, const int32_t *mask, T *dx,
                                        int64_t seq, int64_t hidden) {
  const int64_t b = blockIdx.x;
  for (int64_t h = threadIdx.x; h < hidden; h += blockDim.x) {
    const int64_t best = maxToken(x, mask, b, seq, hidden, h);
    for (int64_t s = 0; s < seq; ++s)
      dx[(b * seq + s) * hidden + h] = s == best ? dy[b * hidden + h] : T{};
  }
}

} // namespace

template <typename T>
void maxTokensForward(const T *x, const int32_t *mask, T *out, int64_t batch, int64_t seq,
                      int64_t hidden, cudaStream_t stream) {
  if (batch > 0)
    BERTC_LAUNCH(maxTokensForwardKernel, unsigned(batch), kElementwiseThreads, 0, stream, x, mask,
                 out, seq, hidden);
}

template <typename T>
void maxTokensBackward(const T *dy, const T *x, const int32_t *mask, T *dx, int64_t batch,
                       int64_t seq, int64_t hidden, cudaStream_t stream) {
  if (batch > 0)
    BERTC_LAUNCH(maxTokensBackwardKernel, unsigned(batch), kElementwiseThreads, 0, stream, dy, x,
                 mask, dx, seq, hidden);
}

template <typename T>
void meanTokensForward(const T *x, const int32_t *mask, T *out, int64_t batch, int64_t seq,
                       int64_t hidden, cudaStream_t stream) {
  if (batch > 0)
    BERTC_LAUNCH(meanTokensForwardKernel, unsigned(batch), kElementwiseThreads, 0, stream, x, mask,
                 out, seq, hidden);
}

template <typename T>
void meanTokensBackward(const T *dy, const int32_t *mask, T *dx, int64_t batch, int64_t seq,
                        int64_t hidden, cudaStream_t stream) {
  if (batch > 0)
    BERTC_LAUNCH(meanTokensBackwardKernel, unsigned(batch), kElementwiseThreads, 0, stream, dy,
                 mask, dx, seq, hidden);
}

template <typename T>
void selectTokenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t hidden,
                        int64_t index, cudaStream_t stream) {
  BERTC_LAUNCH(selectTokenForwardKernel, gridFor(batch * hidden), kElementwiseThreads, 0, stream, x,
               out, batch, seq, hidden, index);
}

template <typename T>
void selectTokenBackward(const T *dout, T *dx, int64_t batch, int64_t seq, int64_t hidden,
                         int64_t index, cudaStream_t stream) {
  BERTC_LAUNCH(selectTokenBackwardKernel, gridFor(batch * seq * hidden), kElementwiseThreads, 0,
               stream, dout, dx, batch, seq, hidden, index);
}

#define INSTANTIATE(T)                                                                             \
  template void selectTokenForward(const T *, T *, int64_t, int64_t, int64_t, int64_t,             \
                                   cudaStream_t);                                                  \
  template void selectTokenBackward(const T *, T *, int64_t, int64_t, int64_t, int64_t,            \
                                    cudaStream_t);                                                 \
  template void meanTokensForward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t,      \
                                  cudaStream_t);                                                   \
  template void meanTokensBackward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t,     \
                                   cudaStream_t);                                                  \
  template void maxTokensForward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t,       \
                                 cudaStream_t);                                                    \
  template void maxTokensBackward(const T *, const T *, const int32_t *, T *, int64_t, int64_t,    \
                                  int64_t, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(bf16)
INSTANTIATE(fp16)
#undef INSTANTIATE

} // namespace bertc::cuda
