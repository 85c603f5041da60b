// LayerNorm over the last dimension on the CPU, as torch.nn.LayerNorm (biased variance).
// Row statistics are accumulated in double (whatever the storage type) and never saved for the
// backward, which recomputes them from x: one extra pass over a row already in cache.
// dgamma and dbeta are fp32 weight gradients. Rows, and the parameter gradients' columns,
// are split over the threads (parallel.h).
#include "bertc/runtime/cpu_kernels.h"

#include "parallel.h"
#include "storage_types.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace bertc::cpu {

namespace {
/// Rows one thread normalises at a time.
constexpr int64_t kRowChunk = 16;
/// Rows whose statistics the backward keeps at once (on the stack) between its row pass and
/// its column pass.
constexpr int64_t kBackwardBlockRows = 256;
/// Columns of dgamma and dbeta one thread sums at a time.
constexpr int64_t kColumnChunk = 64;

/// Mean and reciprocal standard deviation of one row.
struct RowStatistics {
  float mean;
  float rstd;
};

template <typename T> RowStatistics rowStatistics(const T *row, int64_t cols, float eps) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < cols; ++c)
    sum += toFloat(row[c]);
  const double mean = sum / double(cols);
  double squares = 0.0;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < cols; ++c) {
    const double centred = toFloat(row[c]) - mean;
    squares += centred * centred;
  }
  const double variance = squares / double(cols);
  return {float(mean), float(1.0 / std::sqrt(variance + double(eps)))};
}

/// dx of one row (the closed form below), given its statistics.
template <typename T>
void rowInputGradient(const T *dyRow, const T *xRow, const T *gamma, T *dxRow, int64_t cols,
                      RowStatistics stats) {
  double sumG = 0.0, sumGXhat = 0.0;
#pragma omp simd reduction(+ : sumG, sumGXhat)
  for (int64_t c = 0; c < cols; ++c) {
    const float xhat = (toFloat(xRow[c]) - stats.mean) * stats.rstd;
    const float g = toFloat(dyRow[c]) * toFloat(gamma[c]);
    sumG += g;
    sumGXhat += double(g) * xhat;
  }
  const float meanG = float(sumG / double(cols));
  const float meanGXhat = float(sumGXhat / double(cols));
  for (int64_t c = 0; c < cols; ++c) {
    const float xhat = (toFloat(xRow[c]) - stats.mean) * stats.rstd;
    const float g = toFloat(dyRow[c]) * toFloat(gamma[c]);
    dxRow[c] = fromFloat<T>(stats.rstd * (g - meanG - xhat * meanGXhat));
  }
}
} // namespace

template <typename T>
void layerNormForward(const T *x, const T *gamma, const T *beta, T *y, int64_t rows, int64_t cols,
                      float eps) {
  forEachChunk(rows, kRowChunk, [&](int64_t rowBegin, int64_t rowEnd) {
    for (int64_t r = rowBegin; r < rowEnd; ++r) {
      const T *xRow = x + r * cols;
      T *yRow = y + r * cols;
      const RowStatistics stats = rowStatistics(xRow, cols, eps);
      for (int64_t c = 0; c < cols; ++c)
        yRow[c] = fromFloat<T>((toFloat(xRow[c]) - stats.mean) * stats.rstd * toFloat(gamma[c]) +
                               toFloat(beta[c]));
    }
  });
}

// With xhat = (x - mean) * rstd and g = dy * gamma, per row of n columns:
//   1. dbeta += dy and dgamma += dy * xhat (summed over rows);
//   2. dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
// the usual closed form that folds the gradients through mean and rstd into two row means.
// Per block of rows: the threads share its rows for the statistics and (2), then its columns
// for (1), each column adding the block's rows in order, so the sums are those of one thread.
template <typename T>
void layerNormBackward(const T *dy, const T *x, const T *gamma, T *dx, float *dgamma, float *dbeta,
                       int64_t rows, int64_t cols, float eps) {
  std::memset(dgamma, 0, size_t(cols) * sizeof(float));
  std::memset(dbeta, 0, size_t(cols) * sizeof(float));
  RowStatistics stats[kBackwardBlockRows];
  for (int64_t block = 0; block < rows; block += kBackwardBlockRows) {
    const int64_t blockRows = std::min(kBackwardBlockRows, rows - block);
    forEachChunk(blockRows, kRowChunk, [&](int64_t rowBegin, int64_t rowEnd) {
      for (int64_t i = rowBegin; i < rowEnd; ++i) {
        const int64_t r = block + i;
        stats[i] = rowStatistics(x + r * cols, cols, eps);
        rowInputGradient(dy + r * cols, x + r * cols, gamma, dx + r * cols, cols, stats[i]);
      }
    });
    forEachChunk(cols, kColumnChunk, [&](int64_t colBegin, int64_t colEnd) {
      for (int64_t i = 0; i < blockRows; ++i) {
        const T *xRow = x + (block + i) * cols;
        const T *dyRow = dy + (block + i) * cols;
        for (int64_t c = colBegin; c < colEnd; ++c) {
          const float xhat = (toFloat(xRow[c]) - stats[i].mean) * stats[i].rstd;
          const float dyValue = toFloat(dyRow[c]);
          dbeta[c] += dyValue;
          dgamma[c] += dyValue * xhat;
        }
      }
    });
  }
}

// The totals in a scratch row pair (a few KiB), then added.
template <typename T>
void layerNormBackwardAccumulate(const T *dy, const T *x, const T *gamma, T *dx, float *dgamma,
                                 float *dbeta, int64_t rows, int64_t cols, float eps) {
  std::vector<float> totals(2 * size_t(cols));
  layerNormBackward(dy, x, gamma, dx, totals.data(), totals.data() + cols, rows, cols, eps);
  for (int64_t c = 0; c < cols; ++c) {
    dgamma[c] += totals[size_t(c)];
    dbeta[c] += totals[size_t(cols + c)];
  }
}

#define INSTANTIATE(T)                                                                             \
  template void layerNormForward(const T *, const T *, const T *, T *, int64_t, int64_t, float);   \
  template void layerNormBackward(const T *, const T *, const T *, T *, float *, float *, int64_t, \
                                  int64_t, float);                                                 \
  template void layerNormBackwardAccumulate(const T *, const T *, const T *, T *, float *,         \
                                            float *, int64_t, int64_t, float);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
