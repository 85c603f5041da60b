// The backward of a GELU (erf or tanh form) or a dropout fused with the bias gradient of the
// values it writes:
// one column-sum launch (column_sums.cuh) whose threads write dx and add the values they
// stored, so dx is not read again for the bias; the sum is written (a bias gradient) or
// added to a gradient slot. The same formulas as the plain kernels (elementwise.cu,
// dropout.cu) and the same order of sums as biasBackward, so dx and the bias gradient get
// the bits of the two launches they replace.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "column_sums.cuh"
#include "device_storage.cuh"
#include "dropout_group.cuh"
#include "gelu.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
/// The fused kernels' writeBack (columnSums): a row's summed values, already rounded to T,
/// stored at dx + r * cols + c.
template <int N, typename T> struct StoreSummedValues {
  T *dx;
  int64_t cols;
  __device__ void operator()(int64_t r, int64_t c, int columns, const float (&values)[N][1]) const {
    float stored[N];
#pragma unroll // constant indices keep `stored` in registers
    for (int j = 0; j < N; ++j)
      stored[j] = values[j][0];
    storeRoundedFloats(dx + r * cols + c, columns, stored);
  }
};

// A thread takes 16 bytes of adjacent columns (kVectorValues). `gradient` is the GELU's
// (ErfGeluGradient or TanhGeluGradient, gelu.cuh).
template <typename T, typename GeluGradient>
__global__ void __launch_bounds__(kColumnSumsThreads)
    geluBackwardBiasKernel(const T *dy, const T *x, T *dx, int64_t rows, int64_t cols,
                           ColumnSumOutputs<1> db, GeluGradient gradient) {
  constexpr int kColumns = kVectorValues<T>;
  const auto valuesAt = [=](int64_t r, int64_t c, int columns, float(&values)[kColumns][1]) {
    const int64_t i = r * cols + c;
    float grads[kColumns], xs[kColumns];
    loadFloats(dy + i, columns, grads);
    loadFloats(x + i, columns, xs);
#pragma unroll // constant indices keep the arrays in registers
    for (int j = 0; j < kColumns; ++j)
      values[j][0] = roundedTo<T>(gradient(grads[j], xs[j]));
  };
  columnSums<1, kColumns>(valuesAt, rows, cols, db, StoreSummedValues<kColumns, T>{dx, cols});
}

// A thread takes a dropout group of columns (kDropoutGroupSize, dropout_group.cuh), moved
// with one access where aligned.
template <typename T>
__global__ void __launch_bounds__(kColumnSumsThreads)
    dropoutBackwardBiasKernel(const T *dy, T *dx, int64_t rows, TokenDropout dropout,
                              ColumnSumOutputs<1> db) {
  const int64_t cols = dropout.cols;
  const auto valuesAt = [=](int64_t r, int64_t c, int columns,
                            float(&values)[kDropoutGroupSize][1]) {
    float factor[kDropoutGroupSize] = {}, grads[kDropoutGroupSize];
    dropoutFactors(dropout, r, c, columns, factor);
    loadFloats(dy + r * cols + c, columns, grads);
#pragma unroll // constant indices keep the arrays in registers
    for (int j = 0; j < kDropoutGroupSize; ++j)
      values[j][0] = roundedTo<T>(dropped(grads[j], factor[j]));
  };
  columnSums<1, kDropoutGroupSize, /*kRowsInFlight=*/2>(
      valuesAt, rows, cols, db, StoreSummedValues<kDropoutGroupSize, T>{dx, cols});
}

template <typename T, typename GeluGradient>
void launchGeluBackwardBias(const T *dy, const T *x, T *dx, ColumnSumOutputs<1> db, int64_t rows,
                            int64_t cols, GeluGradient gradient, cudaStream_t stream) {
  if (cols == 0)
    return;
  BERTC_LAUNCH(geluBackwardBiasKernel, columnSumsGrid(rows, cols, kVectorValues<T>),
               columnSumsBlock(), 0, stream, dy, x, dx, rows, cols, db, gradient);
}

template <typename T>
void launchDropoutBackwardBias(const T *dy, T *dx, ColumnSumOutputs<1> db, int64_t samples,
                               int64_t tokensPerSample, int64_t cols, float rate,
                               const DropoutKey &key, cudaStream_t stream) {
  if (cols == 0)
    return;
  const int64_t rows = samples * tokensPerSample;
  BERTC_LAUNCH(dropoutBackwardBiasKernel, columnSumsGrid(rows, cols, kDropoutGroupSize),
               columnSumsBlock(), 0, stream, dy, dx, rows,
               tokenDropout(key, tokensPerSample, cols, rate), db);
}
} // namespace

template <typename T>
void geluBackwardBias(const T *dy, const T *x, T *dx, float *db, float *partials, unsigned *tickets,
                      int64_t rows, int64_t cols, cudaStream_t stream) {
  launchGeluBackwardBias(dy, x, dx, {{db}, /*accumulate=*/false, partials, tickets}, rows, cols,
                         ErfGeluGradient{}, stream);
}

template <typename T>
void geluBackwardBiasAccumulate(const T *dy, const T *x, T *dx, float *db, float *partials,
                                unsigned *tickets, int64_t rows, int64_t cols,
                                cudaStream_t stream) {
  launchGeluBackwardBias(dy, x, dx, {{db}, /*accumulate=*/true, partials, tickets}, rows, cols,
                         ErfGeluGradient{}, stream);
}

template <typename T>
void geluTanhBackwardBias(const T *dy, const T *x, T *dx, float *db, float *partials,
                          unsigned *tickets, int64_t rows, int64_t cols, cudaStream_t stream) {
  launchGeluBackwardBias(dy, x, dx, {{db}, /*accumulate=*/false, partials, tickets}, rows, cols,
                         TanhGeluGradient{}, stream);
}

template <typename T>
void geluTanhBackwardBiasAccumulate(const T *dy, const T *x, T *dx, float *db, float *partials,
                                    unsigned *tickets, int64_t rows, int64_t cols,
                                    cudaStream_t stream) {
  launchGeluBackwardBias(dy, x, dx, {{db}, /*accumulate=*/true, partials, tickets}, rows, cols,
                         TanhGeluGradient{}, stream);
}

template <typename T>
void dropoutBackwardBias(const T *dy, T *dx, float *db, float *partials, unsigned *tickets,
                         int64_t samples, int64_t tokensPerSample, int64_t cols, float rate,
                         const DropoutKey &key, cudaStream_t stream) {
  launchDropoutBackwardBias(dy, dx, {{db}, /*accumulate=*/false, partials, tickets}, samples,
                            tokensPerSample, cols, rate, key, stream);
}

template <typename T>
void dropoutBackwardBiasAccumulate(const T *dy, T *dx, float *db, float *partials,
                                   unsigned *tickets, int64_t samples, int64_t tokensPerSample,
                                   int64_t cols, float rate, const DropoutKey &key,
                                   cudaStream_t stream) {
  launchDropoutBackwardBias(dy, dx, {{db}, /*accumulate=*/true, partials, tickets}, samples,
                            tokensPerSample, cols, rate, key, stream);
}

#define INSTANTIATE(T)                                                                             \
  template void geluBackwardBias(const T *, const T *, T *, float *, float *, unsigned *, int64_t, \
                                 int64_t, cudaStream_t);                                           \
  template void geluBackwardBiasAccumulate(const T *, const T *, T *, float *, float *,            \
                                           unsigned *, int64_t, int64_t, cudaStream_t);            \
  template void geluTanhBackwardBias(const T *, const T *, T *, float *, float *, unsigned *,      \
                                     int64_t, int64_t, cudaStream_t);                              \
  template void geluTanhBackwardBiasAccumulate(const T *, const T *, T *, float *, float *,        \
                                               unsigned *, int64_t, int64_t, cudaStream_t);        \
  template void dropoutBackwardBias(const T *, T *, float *, float *, unsigned *, int64_t,         \
                                    int64_t, int64_t, float, const DropoutKey &, cudaStream_t);    \
  template void dropoutBackwardBiasAccumulate(const T *, T *, float *, float *, unsigned *,        \
                                              int64_t, int64_t, int64_t, float,                    \
                                              const DropoutKey &, cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
