// The swap of the last two dimensions that turns the span head's [batch, seq, 2] logits into
// a row of start logits and a row of end logits ([batch, 2, seq]), and its gradient back.
#include "bertc/runtime/cpu_kernels.h"

namespace bertc::cpu {

void transposeLastTwo(const float *x, float *y, int64_t batch, int64_t m, int64_t n) {
  for (int64_t b = 0; b < batch; ++b) {
    const float *in = x + b * m * n;
    float *out = y + b * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[j * m + i] = in[i * n + j];
  }
}

} // namespace bertc::cpu
