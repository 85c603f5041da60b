// Linear layers on the CPU in torch.nn.Linear layout (w is [out, in]): the forward and the
// two backward GEMMs go through OpenBLAS's cblas_sgemm; the bias gradient is a column sum.
#include "bertc/runtime/cpu_kernels.h"

#include <cblas.h>
#include <cstring>

namespace bertc::cpu {

// y is first filled with the bias rows, then the GEMM adds x w^T onto it (beta = 1).
void linearForward(const float *x, const float *w, const float *b, float *y, int64_t rows,
                   int64_t in, int64_t out) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(y + r * out, b, size_t(out) * sizeof(float));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(rows), blasint(out), blasint(in),
              1.0f, x, blasint(in), w, blasint(in), 1.0f, y, blasint(out));
}

void linearBackwardInput(const float *dy, const float *w, float *dx, int64_t rows, int64_t in,
                         int64_t out) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(rows), blasint(in), blasint(out),
              1.0f, dy, blasint(out), w, blasint(in), 0.0f, dx, blasint(in));
}

void linearBackwardWeight(const float *dy, const float *x, float *dw, int64_t rows, int64_t in,
                          int64_t out) {
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(out), blasint(in), blasint(rows),
              1.0f, dy, blasint(out), x, blasint(in), 0.0f, dw, blasint(in));
}

void biasBackward(const float *dy, float *db, int64_t rows, int64_t out) {
  std::memset(db, 0, size_t(out) * sizeof(float));
  for (int64_t r = 0; r < rows; ++r) {
    const float *dyRow = dy + r * out;
    for (int64_t o = 0; o < out; ++o)
      db[o] += dyRow[o];
  }
}

} // namespace bertc::cpu
