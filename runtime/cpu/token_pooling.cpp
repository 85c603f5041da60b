// Pooling a row's tokens into one vector: one token (the pooler's [CLS]), and the mean or
// the maximum over the row's real tokens (the attention mask's 1s), with their gradients.
// The loops visit a value's tokens in order, as the CUDA kernels do, so both give the same
// bits.
#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/max_token.h"

#include "storage_types.h"

#include <algorithm>
#include <cstring>

namespace bertc::cpu {

template <typename T>
void selectTokenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t hidden,
                        int64_t index) {
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(out + b * hidden, x + (b * seq + index) * hidden, size_t(hidden) * sizeof(T));
}

template <typename T>
void selectTokenBackward(const T *dy, T *dx, int64_t batch, int64_t seq, int64_t hidden,
                         int64_t index) {
  std::memset(dx, 0, size_t(batch * seq * hidden) * sizeof(T));
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(dx + (b * seq + index) * hidden, dy + b * hidden, size_t(hidden) * sizeof(T));
}

namespace {
/// The count of a row's real tokens, at least 1 (a row without any averages to zeros).
float realTokens(const int32_t *mask, int64_t seq) {
  int64_t count = 0;
  for (int64_t s = 0; s < seq; ++s)
    count += mask[s] != 0;
  return float(std::max<int64_t>(count, 1));
}
} // namespace

template <typename T>
void meanTokensForward(const T *x, const int32_t *mask, T *out, int64_t batch, int64_t seq,
                       int64_t hidden) {
  // Each value's tokens summed in order, as the CUDA kernel sums them (the same bits).
  for (int64_t b = 0; b < batch; ++b) {
    const float count = realTokens(mask + b * seq, seq);
    for (int64_t h = 0; h < hidden; ++h) {
      float sum = 0.0f;
      for (int64_t s = 0; s < seq; ++s)
        if (mask[b * seq + s] != 0)
          sum += toFloat(x[(b * seq + s) * hidden + h]);
      out[b * hidden + h] = fromFloat<T>(sum / count);
    }
  }
}

template <typename T>
void meanTokensBackward(const T *dy, const int32_t *mask, T *dx, int64_t batch, int64_t seq,
                        int64_t hidden) {
  for (int64_t b = 0; b < batch; ++b) {
    const float count = realTokens(mask + b * seq, seq);
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t h = 0; h < hidden; ++h)
        dx[(b * seq + s) * hidden + h] =
            fromFloat<T>(mask[b * seq + s] != 0 ? toFloat(dy[b * hidden + h]) / count : 0.0f);
  }
}

template <typename T>
void maxTokensForward(const T *x, const int32_t *mask, T *out, int64_t batch, int64_t seq,
                      int64_t hidden) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hidden; ++h) {
      const int64_t s = maxToken(x, mask, b, seq, hidden, h);
      out[b * hidden + h] = s < 0 ? T{} : x[(b * seq + s) * hidden + h];
    }
}

template <typename T>
void maxTokensBackward(const T *dy, const T *x, const int32_t *mask, T *dx, int64_t batch,
                       int64_t seq, int64_t hidden) {
  std::memset(dx, 0, size_t(batch * seq * hidden) * sizeof(T));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hidden; ++h)
      if (const int64_t s = maxToken(x, mask, b, seq, hidden, h); s >= 0)
        dx[(b * seq + s) * hidden + h] = dy[b * hidden + h];
}

#define INSTANTIATE(T)                                                                             \
  template void selectTokenForward(const T *, T *, int64_t, int64_t, int64_t, int64_t);            \
  template void selectTokenBackward(const T *, T *, int64_t, int64_t, int64_t, int64_t);           \
  template void meanTokensForward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t);     \
  template void meanTokensBackward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t);    \
  template void maxTokensForward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t);      \
  template void maxTokensBackward(const T *, const T *, const int32_t *, T *, int64_t, int64_t,    \
                                  int64_t);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
