// Elementwise CUDA kernels: add, erf GELU, tanh and gradient accumulation. Grid-stride
// loops over contiguous arrays, 16 bytes of the storage type a thread at a time, computing
// in fp32 with the CPU twins' formulas (elementwise.cpp, precision.cpp).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "gelu.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
/// Calls f(i, count) for each group of N elements of a 1-D grid-stride loop over [0, n):
/// the group's first index and how many of its N exist (fewer at the end), so that a thread
/// moves 16 bytes of the storage type with one access (loadFloats, storeRoundedFloats).
template <int N, typename F> __device__ __forceinline__ void forEachGroup(int64_t n, const F &f) {
  for (int64_t i = gridStrideBegin() * N; i < n; i += gridStride() * N)
    f(i, n - i < N ? int(n - i) : N);
}

/// Grid of an elementwise kernel that takes N elements a thread.
template <int N> unsigned groupGridFor(int64_t n) { return gridFor((n + N - 1) / N); }

template <typename T> __global__ void addKernel(const T *a, const T *b, T *out, int64_t n) {
  constexpr int N = kVectorValues<T>;
  forEachGroup<N>(n, [=](int64_t i, int count) {
    float x[N], y[N];
    loadFloats(a + i, count, x);
    loadFloats(b + i, count, y);
#pragma unroll
    for (int j = 0; j < N; ++j)
      x[j] += y[j];
    storeRoundedFloats(out + i, count, x);
  });
}

template <typename T> __global__ void geluForwardKernel(const T *x, T *y, int64_t n) {
  constexpr int N = kVectorValues<T>;
  forEachGroup<N>(n, [=](int64_t i, int count) {
    float v[N];
    loadFloats(x + i, count, v);
#pragma unroll
    for (int j = 0; j < N; ++j)
      v[j] = v[j] * 0.5f * (1.0f + erff(v[j] * kInvSqrt2));
    storeRoundedFloats(y + i, count, v);
  });
}

template <typename T>
__global__ void geluBackwardKernel(const T *dy, const T *x, T *dx, int64_t n) {
  constexpr int N = kVectorValues<T>;
  forEachGroup<N>(n, [=](int64_t i, int count) {
    float grads[N], xs[N];
    loadFloats(dy + i, count, grads);
    loadFloats(x + i, count, xs);
#pragma unroll
    for (int j = 0; j < N; ++j)
      grads[j] = geluGradient(grads[j], xs[j]);
    storeRoundedFloats(dx + i, count, grads);
  });
}

template <typename T> __global__ void tanhForwardKernel(const T *x, T *y, int64_t n) {
  constexpr int N = kVectorValues<T>;
  forEachGroup<N>(n, [=](int64_t i, int count) {
    float v[N];
    loadFloats(x + i, count, v);
#pragma unroll
    for (int j = 0; j < N; ++j)
      v[j] = tanhf(v[j]);
    storeRoundedFloats(y + i, count, v);
  });
}

template <typename T>
__global__ void tanhBackwardKernel(const T *dy, const T *y, T *dx, int64_t n) {
  constexpr int N = kVectorValues<T>;
  forEachGroup<N>(n, [=](int64_t i, int count) {
    float grads[N], ys[N];
    loadFloats(dy + i, count, grads);
    loadFloats(y + i, count, ys);
#pragma unroll
    for (int j = 0; j < N; ++j)
      grads[j] *= 1.0f - ys[j] * ys[j];
    storeRoundedFloats(dx + i, count, grads);
  });
}

/// Four elements a thread: 16 bytes of the fp32 gradient.
constexpr int kAccumulateGroup = kVectorValues<float>;

template <typename G> __global__ void accumulateKernel(const G *g, float *grad, int64_t n) {
  constexpr int N = kAccumulateGroup;
  forEachGroup<N>(n, [=](int64_t i, int count) {
    float sums[N], values[N];
    loadFloats(grad + i, count, sums);
    loadFloats(g + i, count, values);
#pragma unroll
    for (int j = 0; j < N; ++j)
      sums[j] += values[j];
    storeRoundedFloats(grad + i, count, sums);
  });
}
} // namespace

template <typename T> void add(const T *a, const T *b, T *out, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(addKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0, stream, a, b,
               out, n);
}

template <typename T> void geluForward(const T *x, T *y, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(geluForwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0, stream,
               x, y, n);
}

template <typename T>
void geluBackward(const T *dy, const T *x, T *dx, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(geluBackwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0,
               stream, dy, x, dx, n);
}

template <typename T> void tanhForward(const T *x, T *y, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(tanhForwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0, stream,
               x, y, n);
}

template <typename T>
void tanhBackward(const T *dy, const T *y, T *dx, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(tanhBackwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0,
               stream, dy, y, dx, n);
}

template <typename G> void accumulate(const G *g, float *grad, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(accumulateKernel, groupGridFor<kAccumulateGroup>(n), kElementwiseThreads, 0, stream,
               g, grad, n);
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
