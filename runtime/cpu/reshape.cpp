// Layout changes of the custom and span heads: each row's tokens laid end to end (padded to
// the plan's sequence length), slices and concatenations of the last dimension, and the
// span head's swap of the last two dimensions. Values move unchanged.
#include "bertc/runtime/cpu_kernels.h"

#include "storage_types.h"

#include <cstring>

namespace bertc::cpu {

template <typename T>
void flattenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t paddedSeq,
                    int64_t hidden) {
  size_t rowBytes = size_t(seq * hidden) * sizeof(T);
  size_t padBytes = size_t((paddedSeq - seq) * hidden) * sizeof(T);
  for (int64_t b = 0; b < batch; ++b) {
    T *row = out + b * paddedSeq * hidden;
    std::memcpy(row, x + b * seq * hidden, rowBytes);
    std::memset(row + seq * hidden, 0, padBytes);
  }
}

template <typename T>
void flattenBackward(const T *dy, T *dx, int64_t batch, int64_t seq, int64_t paddedSeq,
                     int64_t hidden) {
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(dx + b * seq * hidden, dy + b * paddedSeq * hidden,
                size_t(seq * hidden) * sizeof(T));
}

template <typename T>
void sliceColumns(const T *x, T *out, int64_t rows, int64_t inWidth, int64_t start, int64_t width) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out + r * width, x + r * inWidth + start, size_t(width) * sizeof(T));
}

template <typename T>
void placeColumns(const T *x, T *out, int64_t rows, int64_t width, int64_t outWidth,
                  int64_t start) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out + r * outWidth + start, x + r * width, size_t(width) * sizeof(T));
}

template <typename T>
void padColumns(const T *x, T *out, int64_t rows, int64_t width, int64_t outWidth, int64_t start) {
  std::memset(out, 0, size_t(rows * outWidth) * sizeof(T));
  placeColumns(x, out, rows, width, outWidth, start);
}

// The span head's [batch, seq, 2] logits into a row of start logits and a row of end logits
// ([batch, 2, seq]), and its gradient back.
void transposeLastTwo(const float *x, float *y, int64_t batch, int64_t m, int64_t n) {
  for (int64_t b = 0; b < batch; ++b) {
    const float *in = x + b * m * n;
    float *out = y + b * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[j * m + i] = in[i * n + j];
  }
}

#define INSTANTIATE(T)                                                                             \
  template void flattenForward(const T *, T *, int64_t, int64_t, int64_t, int64_t);                \
  template void flattenBackward(const T *, T *, int64_t, int64_t, int64_t, int64_t);               \
  template void sliceColumns(const T *, T *, int64_t, int64_t, int64_t, int64_t);                  \
  template void placeColumns(const T *, T *, int64_t, int64_t, int64_t, int64_t);                  \
  template void padColumns(const T *, T *, int64_t, int64_t, int64_t, int64_t);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
