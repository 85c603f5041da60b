// Elementwise CUDA kernels: add, erf GELU, tanh and gradient accumulation. Grid-stride
// loops over contiguous arrays, loading the storage type and computing in fp32 with the
// CPU twins' formulas (elementwise.cpp, precision.cpp).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "gelu.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
template <typename T> __global__ void addKernel(const T *a, const T *b, T *out, int64_t n) {
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride())
    storeFloat(out + i, loadFloat(a + i) + loadFloat(b + i));
}

template <typename T> __global__ void geluForwardKernel(const T *x, T *y, int64_t n) {
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride()) {
    const float xi = loadFloat(x + i);
    storeFloat(y + i, xi * 0.5f * (1.0f + erff(xi * kInvSqrt2)));
  }
}

template <typename T>
__global__ void geluBackwardKernel(const T *dy, const T *x, T *dx, int64_t n) {
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride())
    storeFloat(dx + i, geluGradient(loadFloat(dy + i), loadFloat(x + i)));
}

template <typename T> __global__ void tanhForwardKernel(const T *x, T *y, int64_t n) {
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride())
    storeFloat(y + i, tanhf(loadFloat(x + i)));
}

template <typename T>
__global__ void tanhBackwardKernel(const T *dy, const T *y, T *dx, int64_t n) {
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride()) {
    const float yi = loadFloat(y + i);
    storeFloat(dx + i, loadFloat(dy + i) * (1.0f - yi * yi));
  }
}

template <typename G> __global__ void accumulateKernel(const G *g, float *grad, int64_t n) {
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride())
    grad[i] += loadFloat(g + i);
}
} // namespace

template <typename T> void add(const T *a, const T *b, T *out, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(addKernel, gridFor(n), kElementwiseThreads, 0, stream, a, b, out, n);
}

template <typename T> void geluForward(const T *x, T *y, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(geluForwardKernel, gridFor(n), kElementwiseThreads, 0, stream, x, y, n);
}

template <typename T>
void geluBackward(const T *dy, const T *x, T *dx, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(geluBackwardKernel, gridFor(n), kElementwiseThreads, 0, stream, dy, x, dx, n);
}

template <typename T> void tanhForward(const T *x, T *y, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(tanhForwardKernel, gridFor(n), kElementwiseThreads, 0, stream, x, y, n);
}

template <typename T>
void tanhBackward(const T *dy, const T *y, T *dx, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(tanhBackwardKernel, gridFor(n), kElementwiseThreads, 0, stream, dy, y, dx, n);
}

template <typename G> void accumulate(const G *g, float *grad, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(accumulateKernel, gridFor(n), kElementwiseThreads, 0, stream, g, grad, n);
}

#define INSTANTIATE(T)                                                                             \
  template void add(const T *, const T *, T *, int64_t, cudaStream_t);                             \
  template void geluForward(const T *, T *, int64_t, cudaStream_t);                                \
  template void geluBackward(const T *, const T *, T *, int64_t, cudaStream_t);                    \
  template void tanhForward(const T *, T *, int64_t, cudaStream_t);                                \
  template void tanhBackward(const T *, const T *, T *, int64_t, cudaStream_t);                    \
  template void accumulate(const T *, float *, int64_t, cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
