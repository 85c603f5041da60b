// Elementwise CUDA kernels: add, mul, scale, GELU (erf and tanh forms), SiLU, tanh, ReLU and
// gradient accumulation. Grid-stride loops over contiguous arrays, 16 bytes of the storage type a
// thread at a time, computing in fp32 with the CPU twins' formulas (elementwise.cpp,
// precision.cpp).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "gelu.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
/// out[i] = f(a[i]) for i < n in fp32, N elements a thread (a grid-stride loop over groups
/// of N): 16 bytes of the storage type move with one access where aligned (loadFloats,
/// storeRoundedFloats).
template <int N, typename A, typename Out, typename F>
__device__ __forceinline__ void mapValues(const A *a, Out *out, int64_t n, const F &f) {
  for (int64_t i = gridStrideBegin() * N; i < n; i += gridStride() * N) {
    const int count = n - i < N ? int(n - i) : N;
    float x[N];
    loadFloats(a + i, count, x);
#pragma unroll
    for (int j = 0; j < N; ++j)
      x[j] = f(x[j]);
    storeRoundedFloats(out + i, count, x);
  }
}

/// out[i] = f(a[i], b[i]) for i < n, as mapValues.
template <int N, typename A, typename B, typename Out, typename F>
__device__ __forceinline__ void mapPairs(const A *a, const B *b, Out *out, int64_t n, const F &f) {
  for (int64_t i = gridStrideBegin() * N; i < n; i += gridStride() * N) {
    const int count = n - i < N ? int(n - i) : N;
    float x[N], y[N];
    loadFloats(a + i, count, x);
    loadFloats(b + i, count, y);
#pragma unroll
    for (int j = 0; j < N; ++j)
      x[j] = f(x[j], y[j]);
    storeRoundedFloats(out + i, count, x);
  }
}

/// Grid of an elementwise kernel that takes N elements a thread.
template <int N> unsigned groupGridFor(int64_t n) { return gridFor((n + N - 1) / N); }

template <typename T> __global__ void addKernel(const T *a, const T *b, T *out, int64_t n) {
  mapPairs<kVectorValues<T>>(a, b, out, n, [](float x, float y) { return x + y; });
}

template <typename T> __global__ void mulKernel(const T *a, const T *b, T *out, int64_t n) {
  mapPairs<kVectorValues<T>>(a, b, out, n, [](float x, float y) { return x * y; });
}

template <typename T> __global__ void scaleKernel(const T *x, T *out, float factor, int64_t n) {
  mapValues<kVectorValues<T>>(x, out, n, [factor](float v) { return v * factor; });
}

template <typename T> __global__ void siluForwardKernel(const T *x, T *y, int64_t n) {
  mapValues<kVectorValues<T>>(x, y, n, [](float v) { return v / (1.0f + expf(-v)); });
}

template <typename T>
__global__ void siluBackwardKernel(const T *dy, const T *x, T *dx, int64_t n) {
  mapPairs<kVectorValues<T>>(dy, x, dx, n, [](float g, float v) {
    const float s = 1.0f / (1.0f + expf(-v));
    return g * (s * (1.0f + v * (1.0f - s)));
  });
}

template <typename T> __global__ void geluForwardKernel(const T *x, T *y, int64_t n) {
  mapValues<kVectorValues<T>>(x, y, n,
                              [](float v) { return v * 0.5f * (1.0f + erff(v * kInvSqrt2)); });
}

template <typename T>
__global__ void geluBackwardKernel(const T *dy, const T *x, T *dx, int64_t n) {
  mapPairs<kVectorValues<T>>(dy, x, dx, n, [](float g, float v) { return geluGradient(g, v); });
}

template <typename T> __global__ void geluTanhForwardKernel(const T *x, T *y, int64_t n) {
  mapValues<kVectorValues<T>>(x, y, n, [](float v) { return geluTanh(v); });
}

template <typename T>
__global__ void geluTanhBackwardKernel(const T *dy, const T *x, T *dx, int64_t n) {
  mapPairs<kVectorValues<T>>(dy, x, dx, n, [](float g, float v) { return geluTanhGradient(g, v); });
}

template <typename T> __global__ void tanhForwardKernel(const T *x, T *y, int64_t n) {
  mapValues<kVectorValues<T>>(x, y, n, [](float v) { return tanhf(v); });
}

template <typename T>
__global__ void tanhBackwardKernel(const T *dy, const T *y, T *dx, int64_t n) {
  mapPairs<kVectorValues<T>>(dy, y, dx, n, [](float g, float v) { return g * (1.0f - v * v); });
}

template <typename T> __global__ void reluForwardKernel(const T *x, T *y, int64_t n) {
  // As the CPU's std::max(v, 0): NaN stays NaN (fmaxf would make it 0), -0 stays -0.
  mapValues<kVectorValues<T>>(x, y, n, [](float v) { return v < 0.0f ? 0.0f : v; });
}

template <typename T>
__global__ void reluBackwardKernel(const T *dy, const T *y, T *dx, int64_t n) {
  mapPairs<kVectorValues<T>>(dy, y, dx, n, [](float g, float v) { return v > 0.0f ? g : 0.0f; });
}

/// Four elements a thread: 16 bytes of the fp32 gradient.
constexpr int kAccumulateGroup = kVectorValues<float>;

template <typename G> __global__ void accumulateKernel(const G *g, float *grad, int64_t n) {
  mapPairs<kAccumulateGroup>(grad, g, grad, n, [](float sum, float v) { return sum + v; });
}
} // namespace

template <typename T> void add(const T *a, const T *b, T *out, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(addKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0, stream, a, b,
               out, n);
}

template <typename T> void mul(const T *a, const T *b, T *out, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(mulKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0, stream, a, b,
               out, n);
}

template <typename T> void scale(const T *x, T *out, float factor, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(scaleKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0, stream, x,
               out, factor, n);
}

template <typename T> void siluForward(const T *x, T *y, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(siluForwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0, stream,
               x, y, n);
}

template <typename T>
void siluBackward(const T *dy, const T *x, T *dx, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(siluBackwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0,
               stream, dy, x, dx, n);
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

template <typename T> void geluTanhForward(const T *x, T *y, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(geluTanhForwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0,
               stream, x, y, n);
}

template <typename T>
void geluTanhBackward(const T *dy, const T *x, T *dx, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(geluTanhBackwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0,
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

template <typename T> void reluForward(const T *x, T *y, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(reluForwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0, stream,
               x, y, n);
}

template <typename T>
void reluBackward(const T *dy, const T *y, T *dx, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(reluBackwardKernel, groupGridFor<kVectorValues<T>>(n), kElementwiseThreads, 0,
               stream, dy, y, dx, n);
}

template <typename G> void accumulate(const G *g, float *grad, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(accumulateKernel, groupGridFor<kAccumulateGroup>(n), kElementwiseThreads, 0, stream,
               g, grad, n);
}

#define INSTANTIATE(T)                                                                             \
  template void add(const T *, const T *, T *, int64_t, cudaStream_t);                             \
  template void mul(const T *, const T *, T *, int64_t, cudaStream_t);                             \
  template void scale(const T *, T *, float, int64_t, cudaStream_t);                               \
  template void siluForward(const T *, T *, int64_t, cudaStream_t);                                \
  template void siluBackward(const T *, const T *, T *, int64_t, cudaStream_t);                    \
  template void geluForward(const T *, T *, int64_t, cudaStream_t);                                \
  template void geluBackward(const T *, const T *, T *, int64_t, cudaStream_t);                    \
  template void geluTanhForward(const T *, T *, int64_t, cudaStream_t);                            \
  template void geluTanhBackward(const T *, const T *, T *, int64_t, cudaStream_t);                \
  template void tanhForward(const T *, T *, int64_t, cudaStream_t);                                \
  template void tanhBackward(const T *, const T *, T *, int64_t, cudaStream_t);                    \
  template void reluForward(const T *, T *, int64_t, cudaStream_t);                                \
  template void reluBackward(const T *, const T *, T *, int64_t, cudaStream_t);                    \
  template void accumulate(const T *, float *, int64_t, cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
