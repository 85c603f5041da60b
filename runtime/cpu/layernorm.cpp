// LayerNorm over the last dimension on the CPU, as torch.nn.LayerNorm (biased variance).
// Row statistics are accumulated in double (whatever the storage type) and never stored: the
// backward recomputes them from x, which costs one extra pass over a row already in cache.
// dgamma and dbeta are fp32 weight gradients.
#include "bertc/runtime/cpu_kernels.h"

#include "storage_types.h"

#include <cmath>
#include <cstring>

namespace bertc::cpu {

namespace {
/// Mean and reciprocal standard deviation of one row.
struct RowStatistics {
  float mean;
  float rstd;
};

template <typename T> RowStatistics rowStatistics(const T *row, int64_t cols, float eps) {
  double sum = 0.0;
  for (int64_t c = 0; c < cols; ++c)
    sum += toFloat(row[c]);
  const double mean = sum / double(cols);
  double squares = 0.0;
  for (int64_t c = 0; c < cols; ++c) {
    const double centred = toFloat(row[c]) - mean;
    squares += centred * centred;
  }
  const double variance = squares / double(cols);
  return {float(mean), float(1.0 / std::sqrt(variance + double(eps)))};
}
} // namespace

template <typename T>
void layerNormForward(const T *x, const T *gamma, const T *beta, T *y, int64_t rows, int64_t cols,
                      float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const T *xRow = x + r * cols;
    T *yRow = y + r * cols;
    const RowStatistics stats = rowStatistics(xRow, cols, eps);
    for (int64_t c = 0; c < cols; ++c)
      yRow[c] = fromFloat<T>((toFloat(xRow[c]) - stats.mean) * stats.rstd * toFloat(gamma[c]) +
                             toFloat(beta[c]));
  }
}

// With xhat = (x - mean) * rstd and g = dy * gamma, per row of n columns:
//   1. dbeta += dy and dgamma += dy * xhat (summed over rows);
//   2. dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
// the usual closed form that folds the gradients through mean and rstd into two row means.
template <typename T>
void layerNormBackward(const T *dy, const T *x, const T *gamma, T *dx, float *dgamma, float *dbeta,
                       int64_t rows, int64_t cols, float eps) {
  std::memset(dgamma, 0, size_t(cols) * sizeof(float));
  std::memset(dbeta, 0, size_t(cols) * sizeof(float));
  for (int64_t r = 0; r < rows; ++r) {
    const T *xRow = x + r * cols;
    const T *dyRow = dy + r * cols;
    T *dxRow = dx + r * cols;
    const RowStatistics stats = rowStatistics(xRow, cols, eps);
    double sumG = 0.0, sumGXhat = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const float xhat = (toFloat(xRow[c]) - stats.mean) * stats.rstd;
      const float dyValue = toFloat(dyRow[c]);
      const float g = dyValue * toFloat(gamma[c]);
      dbeta[c] += dyValue;
      dgamma[c] += dyValue * xhat;
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
}

#define INSTANTIATE(T)                                                                             \
  template void layerNormForward(const T *, const T *, const T *, T *, int64_t, int64_t, float);   \
  template void layerNormBackward(const T *, const T *, const T *, T *, float *, float *, int64_t, \
                                  int64_t, float);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
