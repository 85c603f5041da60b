// The token max pooling takes a value from: shared by the CPU kernels (cpu::maxTokensForward,
// maxTokensBackward) and their CUDA twins, so that both pick the same token, ties and NaNs
// included.
#pragma once

#include "bertc/runtime/half_types.h"
#include "bertc/runtime/host_device.h"

#include <cstdint>

namespace bertc {

/// The first of row b's real tokens (mask 1) holding the largest x[b, s, h] of
/// x [batch, seq, hidden], or the first NaN among them (PyTorch's max gives NaN); -1 for a row
/// without real tokens.
template <typename T>
BERTC_HOST_DEVICE int64_t maxToken(const T *x, const int32_t *mask, int64_t b, int64_t seq,
                                   int64_t hidden, int64_t h) {
  int64_t best = -1;
  float bestValue = 0.0f;
  for (int64_t s = 0; s < seq; ++s) {
    if (mask[b * seq + s] == 0)
      continue;
    const float value = toFloat(x[(b * seq + s) * hidden + h]);
    const bool firstNaN = value != value && bestValue == bestValue;
    if (best < 0 || value > bestValue || firstNaN) {
      best = s;
      bestValue = value;
    }
  }
  return best;
}

} // namespace bertc
