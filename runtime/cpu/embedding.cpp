// Embedding lookup on the CPU: a row gather forward, a scatter-add backward. Word, position
// and token-type embeddings all use these two kernels.
#include "bertc/runtime/cpu_kernels.h"

#include <cstring>

namespace bertc::cpu {

void embeddingForward(const int32_t *ids, const float *table, float *out, int64_t tokens,
                      int64_t hidden) {
  for (int64_t t = 0; t < tokens; ++t)
    std::memcpy(out + t * hidden, table + int64_t(ids[t]) * hidden, size_t(hidden) * sizeof(float));
}

void embeddingBackward(const int32_t *ids, const float *dout, float *dtable, int64_t tokens,
                       int64_t vocab, int64_t hidden) {
  std::memset(dtable, 0, size_t(vocab * hidden) * sizeof(float));
  for (int64_t t = 0; t < tokens; ++t) {
    float *row = dtable + int64_t(ids[t]) * hidden;
    const float *grad = dout + t * hidden;
    for (int64_t c = 0; c < hidden; ++c)
      row[c] += grad[c];
  }
}

} // namespace bertc::cpu
