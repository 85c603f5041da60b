// Embedding lookup on the CPU: a row gather forward, a scatter-add backward into an fp32
// table gradient (zeroed first, or a gradient slot). Word, position and token-type
// embeddings all use these kernels.
#include "bertc/runtime/cpu_kernels.h"

#include "storage_types.h"

#include <cstring>

namespace bertc::cpu {

template <typename T>
void embeddingForward(const int32_t *ids, const T *table, T *out, int64_t tokens, int64_t hidden) {
  for (int64_t t = 0; t < tokens; ++t)
    std::memcpy(out + t * hidden, table + int64_t(ids[t]) * hidden, size_t(hidden) * sizeof(T));
}

template <typename T>
void embeddingBackward(const int32_t *ids, const T *dout, float *dtable, int64_t tokens,
                       int64_t vocab, int64_t hidden, int64_t paddingIdx) {
  std::memset(dtable, 0, size_t(vocab * hidden) * sizeof(float));
  embeddingBackwardAccumulate(ids, dout, dtable, tokens, vocab, hidden, paddingIdx);
}

template <typename T>
void embeddingBackwardAccumulate(const int32_t *ids, const T *dout, float *dtable, int64_t tokens,
                                 int64_t, int64_t hidden, int64_t paddingIdx) {
  for (int64_t t = 0; t < tokens; ++t) {
    if (ids[t] == paddingIdx)
      continue;
    float *row = dtable + int64_t(ids[t]) * hidden;
    const T *grad = dout + t * hidden;
    for (int64_t c = 0; c < hidden; ++c)
      row[c] += toFloat(grad[c]);
  }
}

#define INSTANTIATE(T)                                                                             \
  template void embeddingForward(const int32_t *, const T *, T *, int64_t, int64_t);               \
  template void embeddingBackward(const int32_t *, const T *, float *, int64_t, int64_t, int64_t,  \
                                  int64_t);                                                        \
  template void embeddingBackwardAccumulate(const int32_t *, const T *, float *, int64_t, int64_t, \
                                            int64_t, int64_t);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
