// RMSNorm over the last dimension on the CPU, as transformers' LlamaRMSNorm. A row's mean
// square is accumulated in double whatever the storage type and never saved for the
// backward, which recomputes it from x (one extra pass over a row already in cache). The
// weight gradient is fp32. Rows, and the weight gradient's columns, are split over the
// threads (parallel.h).
#include "bertc/runtime/cpu_kernels.h"

#include "parallel.h"
#include "storage_types.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace bertc::cpu {

namespace {
/// Rows one thread normalises at a time.
constexpr int64_t kRowChunk = 16;
/// Rows whose r the backward keeps at once (on the stack) between its row pass and its
/// column pass.
constexpr int64_t kBackwardBlockRows = 256;
/// Columns of the weight gradient one thread sums at a time.
constexpr int64_t kColumnChunk = 64;

/// r = 1 / sqrt(mean(x^2) + eps) of one row, in double, rounded to fp32 once.
template <typename T> float rowRstd(const T *row, int64_t cols, float eps) {
  double squares = 0.0;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < cols; ++c) {
    const double value = toFloat(row[c]);
    squares += value * value;
  }
  return float(1.0 / std::sqrt(squares / double(cols) + double(eps)));
}

/// x * r rounded to T, as transformers casts the normalised row back to the input's dtype.
template <typename T> float normalised(T x, float rstd) {
  return toFloat(fromFloat<T>(toFloat(x) * rstd));
}
} // namespace

template <typename T>
void rmsNormForward(const T *x, const T *weight, T *y, int64_t rows, int64_t cols, float eps) {
  forEachChunk(rows, kRowChunk, [&](int64_t rowBegin, int64_t rowEnd) {
    for (int64_t r = rowBegin; r < rowEnd; ++r) {
      const T *xRow = x + r * cols;
      T *yRow = y + r * cols;
      const float rstd = rowRstd(xRow, cols, eps);
      for (int64_t c = 0; c < cols; ++c)
        yRow[c] = fromFloat<T>(toFloat(weight[c]) * normalised(xRow[c], rstd));
    }
  });
}

// With r the row's 1 / rms, x-hat = x r and g = dy * weight, per row of n columns:
//   1. dweight += dy * round(x-hat) (summed over rows, in row order);
//   2. dx = r (g - x-hat mean(g x-hat)), which is w dy / rms - x sum(w dy x) / (n rms^3).
// Per block of rows: the threads share its rows for r and (2), then its columns for (1).
template <typename T>
void rmsNormBackward(const T *dy, const T *x, const T *weight, T *dx, float *dweight, int64_t rows,
                     int64_t cols, float eps) {
  std::memset(dweight, 0, size_t(cols) * sizeof(float));
  float rstd[kBackwardBlockRows];
  for (int64_t block = 0; block < rows; block += kBackwardBlockRows) {
    const int64_t blockRows = std::min(kBackwardBlockRows, rows - block);
    forEachChunk(blockRows, kRowChunk, [&](int64_t rowBegin, int64_t rowEnd) {
      for (int64_t i = rowBegin; i < rowEnd; ++i) {
        const T *dyRow = dy + (block + i) * cols, *xRow = x + (block + i) * cols;
        T *dxRow = dx + (block + i) * cols;
        const float r = rstd[i] = rowRstd(xRow, cols, eps);
        double sumGXhat = 0.0;
#pragma omp simd reduction(+ : sumGXhat)
        for (int64_t c = 0; c < cols; ++c)
          sumGXhat += double(toFloat(dyRow[c]) * toFloat(weight[c])) * (toFloat(xRow[c]) * r);
        const float meanGXhat = float(sumGXhat / double(cols));
        for (int64_t c = 0; c < cols; ++c) {
          const float g = toFloat(dyRow[c]) * toFloat(weight[c]);
          dxRow[c] = fromFloat<T>(r * (g - toFloat(xRow[c]) * r * meanGXhat));
        }
      }
    });
    forEachChunk(cols, kColumnChunk, [&](int64_t colBegin, int64_t colEnd) {
      for (int64_t i = 0; i < blockRows; ++i) {
        const T *dyRow = dy + (block + i) * cols, *xRow = x + (block + i) * cols;
        for (int64_t c = colBegin; c < colEnd; ++c)
          dweight[c] += toFloat(dyRow[c]) * normalised(xRow[c], rstd[i]);
      }
    });
  }
}

#define INSTANTIATE(T)                                                                             \
  template void rmsNormForward(const T *, const T *, T *, int64_t, int64_t, float);                \
  template void rmsNormBackward(const T *, const T *, const T *, T *, float *, int64_t, int64_t,   \
                                float);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
