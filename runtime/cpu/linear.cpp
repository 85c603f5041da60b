// Linear layers on the CPU in torch.nn.Linear layout (w is [out, in]): the forward and the
// two backward GEMMs go through mixedGemm (cblas_sgemm for fp32, fp32 accumulation over
// converted tiles for 16-bit storage); the bias gradient is a column sum in fp32.
#include "bertc/runtime/cpu_kernels.h"

#include "mixed_gemm.h"
#include "storage_types.h"

#include <cstring>

namespace bertc::cpu {

// y is first filled with the bias rows, then the GEMM adds x w^T onto it (beta = 1); the
// bias is representable in T, so 16-bit storage still rounds once, at the end.
template <typename T>
void linearForward(const T *x, const T *w, const T *b, T *y, int64_t rows, int64_t in,
                   int64_t out) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(y + r * out, b, size_t(out) * sizeof(T));
  mixedGemm(false, true, rows, out, in, 1.0f, x, in, w, in, 1.0f, y, out);
}

template <typename T>
void linearBackwardInput(const T *dy, const T *w, T *dx, int64_t rows, int64_t in, int64_t out) {
  mixedGemm(false, false, rows, in, out, 1.0f, dy, out, w, in, 0.0f, dx, in);
}

template <typename T>
void linearBackwardWeight(const T *dy, const T *x, float *dw, int64_t rows, int64_t in,
                          int64_t out) {
  mixedGemm(true, false, out, in, rows, 1.0f, dy, out, x, in, 0.0f, dw, in);
}

template <typename T>
void linearBackwardWeightAccumulate(const T *dy, const T *x, float *dw, int64_t rows, int64_t in,
                                    int64_t out) {
  if (rows > 0)
    mixedGemm(true, false, out, in, rows, 1.0f, dy, out, x, in, 1.0f, dw, in);
}

template <typename T> void biasBackward(const T *dy, float *db, int64_t rows, int64_t out) {
  std::memset(db, 0, size_t(out) * sizeof(float));
  for (int64_t r = 0; r < rows; ++r) {
    const T *dyRow = dy + r * out;
    for (int64_t o = 0; o < out; ++o)
      db[o] += toFloat(dyRow[o]);
  }
}

#define INSTANTIATE(T)                                                                             \
  template void linearForward(const T *, const T *, const T *, T *, int64_t, int64_t, int64_t);    \
  template void linearBackwardInput(const T *, const T *, T *, int64_t, int64_t, int64_t);         \
  template void linearBackwardWeight(const T *, const T *, float *, int64_t, int64_t, int64_t);    \
  template void linearBackwardWeightAccumulate(const T *, const T *, float *, int64_t, int64_t,    \
                                               int64_t);                                           \
  template void biasBackward(const T *, float *, int64_t, int64_t);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
