// Selecting one token's vector per row ([CLS] for the pooler) and its gradient: grid-stride
// loops over the output.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

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

} // namespace

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
                                    cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(bf16)
INSTANTIATE(fp16)
#undef INSTANTIATE

} // namespace bertc::cuda
