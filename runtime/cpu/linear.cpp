// Linear layers on the CPU in torch.nn.Linear layout (w is [out, in]): the forward and the
// two backward GEMMs go through mixedGemm (cblas_sgemm for fp32, fp32 accumulation over
// converted tiles for 16-bit storage), split in blocks over the threads; the bias gradient
// is a column sum in fp32.
#include "bertc/runtime/cpu_kernels.h"

#include "mixed_gemm.h"
#include "parallel.h"
#include "storage_types.h"

#include <algorithm>
#include <cstring>

namespace bertc::cpu {

namespace {
/// Columns of the bias gradient one thread sums at a time.
constexpr int64_t kBiasColumnChunk = 64;
} // namespace

// With a bias, y is first filled with the bias rows, then the GEMM adds x w^T onto it
// (beta = 1); the bias is representable in T, so 16-bit storage still rounds once, at the
// end. Without one, the GEMM overwrites y (beta = 0).
template <typename T>
void linearForward(const T *x, const T *w, const T *b, T *y, int64_t rows, int64_t in,
                   int64_t out) {
  if (b)
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(y + r * out, b, size_t(out) * sizeof(T));
  splitGemm(false, true, rows, out, in, 1.0f, x, in, w, in, b ? 1.0f : 0.0f, y, out);
}

template <typename T>
void linearBackwardInput(const T *dy, const T *w, T *dx, int64_t rows, int64_t in, int64_t out) {
  splitGemm(false, false, rows, in, out, 1.0f, dy, out, w, in, 0.0f, dx, in);
}

// dx starts as the addend (unless it is the addend) and the GEMM adds dy w onto it
// (beta = 1): 16-bit storage rounds once, at the end, as cuBLASLt's C does.
template <typename T>
void linearBackwardInputAdd(const T *dy, const T *w, const T *addend, T *dx, int64_t rows,
                            int64_t in, int64_t out) {
  if (dx != addend)
    std::memcpy(dx, addend, size_t(rows * in) * sizeof(T));
  splitGemm(false, false, rows, in, out, 1.0f, dy, out, w, in, 1.0f, dx, in);
}

template <typename T>
void linearBackwardWeight(const T *dy, const T *x, float *dw, int64_t rows, int64_t in,
                          int64_t out) {
  splitGemm(true, false, out, in, rows, 1.0f, dy, out, x, in, 0.0f, dw, in);
}

template <typename T>
void linearBackwardWeightAccumulate(const T *dy, const T *x, float *dw, int64_t rows, int64_t in,
                                    int64_t out) {
  if (rows > 0)
    splitGemm(true, false, out, in, rows, 1.0f, dy, out, x, in, 1.0f, dw, in);
}

// The threads share the columns; each column adds the rows in order, as one thread would.
namespace {
/// db = (or, accumulating, +=) dy summed over rows: each chunk of columns is summed from
/// zero in row order, then stored or added.
template <typename T>
void columnSums(const T *dy, float *db, bool accumulate, int64_t rows, int64_t out) {
  forEachChunk(out, kBiasColumnChunk, [&](int64_t colBegin, int64_t colEnd) {
    float sums[kBiasColumnChunk] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const T *dyRow = dy + r * out;
      for (int64_t o = colBegin; o < colEnd; ++o)
        sums[o - colBegin] += toFloat(dyRow[o]);
    }
    for (int64_t o = colBegin; o < colEnd; ++o)
      db[o] = accumulate ? db[o] + sums[o - colBegin] : sums[o - colBegin];
  });
}
} // namespace

template <typename T> void biasBackward(const T *dy, float *db, int64_t rows, int64_t out) {
  columnSums(dy, db, /*accumulate=*/false, rows, out);
}

template <typename T>
void biasBackwardAccumulate(const T *dy, float *db, int64_t rows, int64_t out) {
  columnSums(dy, db, /*accumulate=*/true, rows, out);
}

#define INSTANTIATE(T)                                                                             \
  template void linearForward(const T *, const T *, const T *, T *, int64_t, int64_t, int64_t);    \
  template void linearBackwardInput(const T *, const T *, T *, int64_t, int64_t, int64_t);         \
  template void linearBackwardInputAdd(const T *, const T *, const T *, T *, int64_t, int64_t,     \
                                       int64_t);                                                   \
  template void linearBackwardWeight(const T *, const T *, float *, int64_t, int64_t, int64_t);    \
  template void linearBackwardWeightAccumulate(const T *, const T *, float *, int64_t, int64_t,    \
                                               int64_t);                                           \
  template void biasBackward(const T *, float *, int64_t, int64_t);                                \
  template void biasBackwardAccumulate(const T *, float *, int64_t, int64_t);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
