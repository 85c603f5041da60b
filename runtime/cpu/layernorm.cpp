// LayerNorm over the last dimension on the CPU, as torch.nn.LayerNorm (biased variance).
// Row statistics are accumulated in double and never stored: the backward recomputes them
// from x, which costs one extra pass over a row that is already in cache.
#include "bertc/runtime/cpu_kernels.h"

#include <cmath>
#include <cstring>

namespace bertc::cpu {

namespace {
/// Mean and reciprocal standard deviation of one row.
struct RowStatistics {
  float mean;
  float rstd;
};

RowStatistics rowStatistics(const float *row, int64_t cols, float eps) {
  double sum = 0.0;
  for (int64_t c = 0; c < cols; ++c)
    sum += row[c];
  const double mean = sum / double(cols);
  double squares = 0.0;
  for (int64_t c = 0; c < cols; ++c) {
    const double centred = row[c] - mean;
    squares += centred * centred;
  }
  const double variance = squares / double(cols);
  return {float(mean), float(1.0 / std::sqrt(variance + double(eps)))};
}
} // namespace

void layerNormForward(const float *x, const float *gamma, const float *beta, float *y, int64_t rows,
                      int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *xRow = x + r * cols;
    float *yRow = y + r * cols;
    const RowStatistics stats = rowStatistics(xRow, cols, eps);
    for (int64_t c = 0; c < cols; ++c)
      yRow[c] = (xRow[c] - stats.mean) * stats.rstd * gamma[c] + beta[c];
  }
}

// With xhat = (x - mean) * rstd and g = dy * gamma, per row of n columns:
//   1. dbeta += dy and dgamma += dy * xhat (summed over rows);
//   2. dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
// the usual closed form that folds the gradients through mean and rstd into two row means.
void layerNormBackward(const float *dy, const float *x, const float *gamma, float *dx,
                       float *dgamma, float *dbeta, int64_t rows, int64_t cols, float eps) {
  std::memset(dgamma, 0, size_t(cols) * sizeof(float));
  std::memset(dbeta, 0, size_t(cols) * sizeof(float));
  for (int64_t r = 0; r < rows; ++r) {
    const float *xRow = x + r * cols;
    const float *dyRow = dy + r * cols;
    float *dxRow = dx + r * cols;
    const RowStatistics stats = rowStatistics(xRow, cols, eps);
    double sumG = 0.0, sumGXhat = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const float xhat = (xRow[c] - stats.mean) * stats.rstd;
      const float g = dyRow[c] * gamma[c];
      dbeta[c] += dyRow[c];
      dgamma[c] += dyRow[c] * xhat;
      sumG += g;
      sumGXhat += double(g) * xhat;
    }
    const float meanG = float(sumG / double(cols));
    const float meanGXhat = float(sumGXhat / double(cols));
    for (int64_t c = 0; c < cols; ++c) {
      const float xhat = (xRow[c] - stats.mean) * stats.rstd;
      const float g = dyRow[c] * gamma[c];
      dxRow[c] = stats.rstd * (g - meanG - xhat * meanGXhat);
    }
  }
}

} // namespace bertc::cpu
