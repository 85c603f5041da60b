// Layout changes of the custom and span heads: flattening the tokens of each row (padded to
// the plan's sequence length), slices and concatenations of the last dimension, and
// transposing the last two dimensions. Grid-stride loops over the output; values move
// unchanged.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "launch.cuh"

namespace bertc::cuda {

namespace {

template <typename T>
__global__ void flattenForwardKernel(const T *x, T *out, int64_t batch, int64_t seq,
                                     int64_t paddedSeq, int64_t hidden) {
  const int64_t rowSize = paddedSeq * hidden;
  for (int64_t i = gridStrideBegin(); i < batch * rowSize; i += gridStride()) {
    const int64_t b = i / rowSize, k = i % rowSize;
    out[i] = k < seq * hidden ? x[b * seq * hidden + k] : T{}; // zero bits: +0 in every type
  }
}

template <typename T>
__global__ void flattenBackwardKernel(const T *dy, T *dx, int64_t batch, int64_t seq,
                                      int64_t paddedSeq, int64_t hidden) {
  const int64_t rowSize = seq * hidden;
  for (int64_t i = gridStrideBegin(); i < batch * rowSize; i += gridStride())
    dx[i] = dy[(i / rowSize) * paddedSeq * hidden + i % rowSize];
}

template <typename T>
__global__ void sliceColumnsKernel(const T *x, T *out, int64_t rows, int64_t inWidth, int64_t start,
                                   int64_t width) {
  for (int64_t i = gridStrideBegin(); i < rows * width; i += gridStride())
    out[i] = x[(i / width) * inWidth + start + i % width];
}

template <typename T>
__global__ void placeColumnsKernel(const T *x, T *out, int64_t rows, int64_t width,
                                   int64_t outWidth, int64_t start) {
  for (int64_t i = gridStrideBegin(); i < rows * width; i += gridStride())
    out[(i / width) * outWidth + start + i % width] = x[i];
}

template <typename T>
__global__ void padColumnsKernel(const T *x, T *out, int64_t rows, int64_t width, int64_t outWidth,
                                 int64_t start) {
  for (int64_t i = gridStrideBegin(); i < rows * outWidth; i += gridStride()) {
    const int64_t column = i % outWidth - start;
    out[i] = column >= 0 && column < width ? x[(i / outWidth) * width + column] : T{};
  }
}

__global__ void transposeLastTwoKernel(const float *x, float *y, int64_t batch, int64_t m,
                                       int64_t n) {
  for (int64_t i = gridStrideBegin(); i < batch * m * n; i += gridStride()) {
    const int64_t b = i / (m * n), k = i % (m * n); // k = j * m + r in y
    const int64_t j = k / m, r = k % m;
    y[i] = x[b * m * n + r * n + j];
  }
}

} // namespace

template <typename T>
void flattenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t paddedSeq,
                    int64_t hidden, cudaStream_t stream) {
  BERTC_LAUNCH(flattenForwardKernel, gridFor(batch * paddedSeq * hidden), kElementwiseThreads, 0,
               stream, x, out, batch, seq, paddedSeq, hidden);
}

template <typename T>
void flattenBackward(const T *dy, T *dx, int64_t batch, int64_t seq, int64_t paddedSeq,
                     int64_t hidden, cudaStream_t stream) {
  BERTC_LAUNCH(flattenBackwardKernel, gridFor(batch * seq * hidden), kElementwiseThreads, 0, stream,
               dy, dx, batch, seq, paddedSeq, hidden);
}

template <typename T>
void sliceColumns(const T *x, T *out, int64_t rows, int64_t inWidth, int64_t start, int64_t width,
                  cudaStream_t stream) {
  BERTC_LAUNCH(sliceColumnsKernel, gridFor(rows * width), kElementwiseThreads, 0, stream, x, out,
               rows, inWidth, start, width);
}

template <typename T>
void placeColumns(const T *x, T *out, int64_t rows, int64_t width, int64_t outWidth, int64_t start,
                  cudaStream_t stream) {
  BERTC_LAUNCH(placeColumnsKernel, gridFor(rows * width), kElementwiseThreads, 0, stream, x, out,
               rows, width, outWidth, start);
}

template <typename T>
void padColumns(const T *x, T *out, int64_t rows, int64_t width, int64_t outWidth, int64_t start,
                cudaStream_t stream) {
  BERTC_LAUNCH(padColumnsKernel, gridFor(rows * outWidth), kElementwiseThreads, 0, stream, x, out,
               rows, width, outWidth, start);
}

void transposeLastTwo(const float *x, float *y, int64_t batch, int64_t m, int64_t n,
                      cudaStream_t stream) {
  BERTC_LAUNCH(transposeLastTwoKernel, gridFor(batch * m * n), kElementwiseThreads, 0, stream, x, y,
               batch, m, n);
}

#define INSTANTIATE(T)                                                                             \
  template void flattenForward(const T *, T *, int64_t, int64_t, int64_t, int64_t, cudaStream_t);  \
  template void flattenBackward(const T *, T *, int64_t, int64_t, int64_t, int64_t, cudaStream_t); \
  template void sliceColumns(const T *, T *, int64_t, int64_t, int64_t, int64_t, cudaStream_t);    \
  template void placeColumns(const T *, T *, int64_t, int64_t, int64_t, int64_t, cudaStream_t);    \
  template void padColumns(const T *, T *, int64_t, int64_t, int64_t, int64_t, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(bf16)
INSTANTIATE(fp16)
#undef INSTANTIATE

} // namespace bertc::cuda
