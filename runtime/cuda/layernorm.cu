// LayerNorm over the last dimension on the GPU, as torch.nn.LayerNorm (biased variance),
// optionally fused with the residual add before it, and with the dropout of that add's first
// addend. One warp per row, each lane 16 bytes of adjacent columns at a time (one vector
// access where aligned): the row is read from global memory once per pass (later passes hit
// the cache); statistics are fp32 (two-pass, so no cancellation). The IR keeps no
// forward's statistics, so the backward's row kernel computes them again, as the forward
// does, and leaves them for its parameter sums.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "column_sums.cuh"
#include "device_storage.cuh"
#include "dropout_group.cuh"
#include "launch.cuh"
#include "warp_reduce.cuh"

namespace bertc::cuda {

namespace {
constexpr int kWarpSize = 32;
constexpr int kRowsPerBlock = 8;

struct RowStatistics {
  float mean, rstd;
};

/// Calls body(c, n) for each group of adjacent columns the calling lane takes in a row:
/// 16 bytes of T a group (one vector access where aligned), n of them, fewer at the row's
/// end, the warp's lanes side by side.
template <typename T, typename Body>
__device__ void forLaneColumns(int64_t cols, int lane, const Body &body) {
  constexpr int kColumns = kVectorValues<T>;
  for (int64_t c = int64_t(lane) * kColumns; c < cols; c += kWarpSize * kColumns)
    body(c, cols - c < kColumns ? int(cols - c) : kColumns);
}

/// A row's mean = sum(x) / cols, then var = sum((x - mean)^2) / cols and
/// rstd = 1 / sqrt(var + eps), by the row's warp (this lane's `lane`).
template <typename T>
__device__ RowStatistics rowStatistics(const T *x, int64_t cols, int lane, float eps) {
  constexpr int kColumns = kVectorValues<T>;
  float total = 0.0f;
  forLaneColumns<T>(cols, lane, [&](int64_t c, int n) {
    float values[kColumns];
    loadFloats(x + c, n, values);
#pragma unroll // constant indices keep `values` in registers
    for (int j = 0; j < kColumns; ++j)
      total += j < n ? values[j] : 0.0f;
  });
  const float rowMean = warpSum(total) / float(cols);
  float squares = 0.0f;
  forLaneColumns<T>(cols, lane, [&](int64_t c, int n) {
    float values[kColumns];
    loadFloats(x + c, n, values);
#pragma unroll
    for (int j = 0; j < kColumns; ++j) {
      const float centred = values[j] - rowMean;
      squares += j < n ? centred * centred : 0.0f;
    }
  });
  return {rowMean, 1.0f / sqrtf(warpSum(squares) / float(cols) + eps)};
}

/// sum = dropout(a) + b over one row (its warp), the dropped value rounded to T as
/// dropoutForward stores it. A lane takes dropout groups of columns (dropout_group.cuh), so
/// it reads back columns other lanes wrote: the warp synchronises before it returns.
template <typename T>
__device__ void storeDroppedSum(const T *a, const T *b, T *sum, int64_t row, int lane,
                                const TokenDropout &dropout) {
  const int64_t cols = dropout.cols;
  for (int64_t c = int64_t(lane) * kDropoutGroupSize; c < cols;
       c += kWarpSize * kDropoutGroupSize) {
    const int columns = cols - c < kDropoutGroupSize ? int(cols - c) : kDropoutGroupSize;
    float factor[kDropoutGroupSize];
    dropoutFactors(dropout, row, c, columns, factor);
#pragma unroll
    for (int j = 0; j < kDropoutGroupSize; ++j) {
      if (j >= columns)
        break;
      const int64_t i = row * cols + c + j;
      storeFloat(sum + i, roundedTo<T>(dropped(loadFloat(a + i), factor[j])) + loadFloat(b + i));
    }
  }
  __syncwarp(); // orders the warp's stores before its lanes read each other's columns
}

/// Per row (one warp):
///   1. with a residual, x = a + b (a dropped out first where `dropout` has a rate) rounded
///      to T and stored in `sum`; otherwise x = a;
///   2. the row's statistics (rowStatistics);
///   3. y = (x - mean) * rstd * gamma + beta.
template <typename T>
__global__ void layerNormForwardKernel(const T *a, const T *b, T *sum, const T *gamma,
                                       const T *beta, T *y, float *mean, float *rstd, int64_t rows,
                                       int64_t cols, float eps, TokenDropout dropout) {
  const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarpSize;
  if (row >= rows)
    return;
  const int lane = threadIdx.x % kWarpSize;
  constexpr int kColumns = kVectorValues<T>;
  const T *x = a + row * cols;
  if (b && dropout.rate > 0.0f) {
    storeDroppedSum(a, b, sum, row, lane, dropout);
    x = sum + row * cols;
  } else if (b) {
    T *sumRow = sum + row * cols;
    forLaneColumns<T>(cols, lane, [&](int64_t c, int n) {
      float values[kColumns], addend[kColumns];
      loadFloats(x + c, n, values);
      loadFloats(b + row * cols + c, n, addend);
#pragma unroll // constant indices keep the arrays in registers
      for (int j = 0; j < kColumns; ++j)
        values[j] += addend[j];
      storeRoundedFloats(sumRow + c, n, values);
    });
    x = sumRow; // each lane rereads only what it wrote
  }
  const RowStatistics statistics = rowStatistics(x, cols, lane, eps);
  const float rowMean = statistics.mean, rowRstd = statistics.rstd;
  T *yRow = y + row * cols;
  forLaneColumns<T>(cols, lane, [&](int64_t c, int n) {
    float values[kColumns], scale[kColumns], shift[kColumns];
    loadFloats(x + c, n, values);
    loadFloats(gamma + c, n, scale);
    loadFloats(beta + c, n, shift);
#pragma unroll
    for (int j = 0; j < kColumns; ++j)
      values[j] = (values[j] - rowMean) * rowRstd * scale[j] + shift[j];
    storeRoundedFloats(yRow + c, n, values);
  });
  if (lane == 0) {
    mean[row] = rowMean;
    rstd[row] = rowRstd;
  }
}

/// dx per row (one warp), with the row's statistics (written to mean and rstd for the
/// parameter sums), xhat = (x - mean) * rstd and g = dy * gamma:
/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
template <typename T>
__global__ void layerNormBackwardInputKernel(const T *dy, const T *x, const T *gamma, float eps,
                                             float *mean, float *rstd, T *dx, int64_t rows,
                                             int64_t cols) {
  const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarpSize;
  if (row >= rows)
    return;
  const int lane = threadIdx.x % kWarpSize;
  const T *xRow = x + row * cols, *dyRow = dy + row * cols;
  const RowStatistics statistics = rowStatistics(xRow, cols, lane, eps);
  const float rowMean = statistics.mean, rowRstd = statistics.rstd;
  if (lane == 0) {
    mean[row] = rowMean;
    rstd[row] = rowRstd;
  }
  constexpr int kColumns = kVectorValues<T>;
  // xhat and g of the lane's group of n columns from c.
  const auto load = [&](int64_t c, int n, float(&xhat)[kColumns], float(&g)[kColumns]) {
    float scale[kColumns];
    loadFloats(xRow + c, n, xhat);
    loadFloats(dyRow + c, n, g);
    loadFloats(gamma + c, n, scale);
#pragma unroll // constant indices keep the arrays in registers
    for (int j = 0; j < kColumns; ++j) {
      xhat[j] = (xhat[j] - rowMean) * rowRstd;
      g[j] *= scale[j];
    }
  };
  float sumG = 0.0f, sumGXhat = 0.0f;
  forLaneColumns<T>(cols, lane, [&](int64_t c, int n) {
    float xhat[kColumns], g[kColumns];
    load(c, n, xhat, g);
#pragma unroll
    for (int j = 0; j < kColumns; ++j)
      if (j < n) {
        sumG += g[j];
        sumGXhat += g[j] * xhat[j];
      }
  });
  const float meanG = warpSum(sumG) / float(cols);
  const float meanGXhat = warpSum(sumGXhat) / float(cols);
  T *dxRow = dx + row * cols;
  forLaneColumns<T>(cols, lane, [&](int64_t c, int n) {
    float xhat[kColumns], g[kColumns];
    load(c, n, xhat, g);
#pragma unroll
    for (int j = 0; j < kColumns; ++j)
      g[j] = rowRstd * (g[j] - meanG - xhat[j] * meanGXhat);
    storeRoundedFloats(dxRow + c, n, g);
  });
}

/// dgamma = sum over rows of dy * xhat, dbeta = sum over rows of dy.
template <typename T>
__global__ void __launch_bounds__(kColumnSumsThreads)
    layerNormBackwardParamsKernel(const T *dy, const T *x, const float *mean, const float *rstd,
                                  int64_t rows, int64_t cols, ColumnSumOutputs<2> dgammaDbeta) {
  const auto valuesAt = [=](int64_t r, int64_t c, int, float(&values)[1][2]) {
    const float dyValue = loadFloat(dy + r * cols + c);
    values[0][0] = dyValue * ((loadFloat(x + r * cols + c) - mean[r]) * rstd[r]);
    values[0][1] = dyValue;
  };
  columnSums<2, 1, /*kRowsInFlight=*/4>(valuesAt, rows, cols, dgammaDbeta);
}

unsigned rowBlocks(int64_t rows) { return unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock); }

/// No dropout: the kernel's `dropout` argument where there is none.
constexpr TokenDropout kNoDropout{};

template <typename T>
void launchLayerNormForward(const T *a, const T *b, T *sum, const T *gamma, const T *beta, T *y,
                            float *mean, float *rstd, int64_t rows, int64_t cols, float eps,
                            const TokenDropout &dropout, cudaStream_t stream) {
  if (rows == 0)
    return;
  BERTC_LAUNCH(layerNormForwardKernel, rowBlocks(rows), kRowsPerBlock * kWarpSize, 0, stream, a, b,
               sum, gamma, beta, y, mean, rstd, rows, cols, eps, dropout);
}
} // namespace

template <typename T>
void layerNormForward(const T *x, const T *gamma, const T *beta, T *y, float *mean, float *rstd,
                      int64_t rows, int64_t cols, float eps, cudaStream_t stream) {
  launchLayerNormForward<T>(x, nullptr, nullptr, gamma, beta, y, mean, rstd, rows, cols, eps,
                            kNoDropout, stream);
}

template <typename T>
void addLayerNormForward(const T *a, const T *b, T *sum, const T *gamma, const T *beta, T *y,
                         float *mean, float *rstd, int64_t rows, int64_t cols, float eps,
                         cudaStream_t stream) {
  launchLayerNormForward(a, b, sum, gamma, beta, y, mean, rstd, rows, cols, eps, kNoDropout,
                         stream);
}

template <typename T>
void dropoutAddLayerNormForward(const T *a, const T *b, T *sum, const T *gamma, const T *beta, T *y,
                                float *mean, float *rstd, int64_t samples, int64_t tokensPerSample,
                                int64_t cols, float eps, float rate, const DropoutKey &key,
                                cudaStream_t stream) {
  launchLayerNormForward(a, b, sum, gamma, beta, y, mean, rstd, samples * tokensPerSample, cols,
                         eps, tokenDropout(key, tokensPerSample, cols, rate), stream);
}

namespace {
/// dx and the statistics, then dgamma and dbeta into `paramGrads` (written, or added to:
/// its `accumulate`).
template <typename T>
void launchLayerNormBackward(const T *dy, const T *x, const T *gamma, float eps, float *mean,
                             float *rstd, T *dx, const ColumnSumOutputs<2> &paramGrads,
                             int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows > 0) {
    BERTC_LAUNCH(layerNormBackwardInputKernel, rowBlocks(rows), kRowsPerBlock * kWarpSize, 0,
                 stream, dy, x, gamma, eps, mean, rstd, dx, rows, cols);
  }
  if (cols > 0) {
    BERTC_LAUNCH(layerNormBackwardParamsKernel, columnSumsGrid(rows, cols), columnSumsBlock(), 0,
                 stream, dy, x, mean, rstd, rows, cols, paramGrads);
  }
}
} // namespace

template <typename T>
void layerNormBackward(const T *dy, const T *x, const T *gamma, float eps, float *mean, float *rstd,
                       T *dx, float *dgamma, float *dbeta, float *partials, unsigned *tickets,
                       int64_t rows, int64_t cols, cudaStream_t stream) {
  launchLayerNormBackward(dy, x, gamma, eps, mean, rstd, dx,
                          {{dgamma, dbeta}, /*accumulate=*/false, partials, tickets}, rows, cols,
                          stream);
}

template <typename T>
void layerNormBackwardAccumulate(const T *dy, const T *x, const T *gamma, float eps, float *mean,
                                 float *rstd, T *dx, float *dgamma, float *dbeta, float *partials,
                                 unsigned *tickets, int64_t rows, int64_t cols,
                                 cudaStream_t stream) {
  launchLayerNormBackward(dy, x, gamma, eps, mean, rstd, dx,
                          {{dgamma, dbeta}, /*accumulate=*/true, partials, tickets}, rows, cols,
                          stream);
}

#define INSTANTIATE(T)                                                                             \
  template void layerNormForward(const T *, const T *, const T *, T *, float *, float *, int64_t,  \
                                 int64_t, float, cudaStream_t);                                    \
  template void addLayerNormForward(const T *, const T *, T *, const T *, const T *, T *, float *, \
                                    float *, int64_t, int64_t, float, cudaStream_t);               \
  template void dropoutAddLayerNormForward(const T *, const T *, T *, const T *, const T *, T *,   \
                                           float *, float *, int64_t, int64_t, int64_t, float,     \
                                           float, const DropoutKey &, cudaStream_t);               \
  template void layerNormBackward(const T *, const T *, const T *, float, float *, float *, T *,   \
                                  float *, float *, float *, unsigned *, int64_t, int64_t,         \
                                  cudaStream_t);                                                   \
  template void layerNormBackwardAccumulate(const T *, const T *, const T *, float, float *,       \
                                            float *, T *, float *, float *, float *, unsigned *,   \
                                            int64_t, int64_t, cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
