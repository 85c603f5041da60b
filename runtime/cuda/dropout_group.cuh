// Internal to the CUDA kernels: dropout over the tokens of a [samples * tokensPerSample, cols]
// tensor, decided for a few adjacent columns of one token at a time, so that a thread that
// takes a dropout group of columns (kDropoutGroupSize) makes one Philox call for them.
// Dropout's rows are the samples (counter_rng.h): token t's column c is element
// (t mod tokensPerSample) * cols + c of its sample, exactly as dropoutForward keys it.
#pragma once

#include "bertc/runtime/counter_rng.h"

namespace bertc::cuda {

/// Dropout at `rate` over the tokens of samples of `tokensPerSample` tokens of `cols` columns.
struct TokenDropout {
  DropoutKey key;
  int64_t tokensPerSample, cols;
  float rate, keptScale;
};

/// factor[j] for j < columns (at most kDropoutGroupSize): what dropout multiplies column
/// c + j of token `token` by, keptScale where kept, 0 where dropped. One Philox call when the
/// columns are one group (cols and c multiples of the group size), else at most two; none
/// at rate 0 (every element kept).
__device__ inline void dropoutFactors(const TokenDropout &dropout, int64_t token, int64_t c,
                                      int columns, float (&factor)[kDropoutGroupSize]) {
  const int64_t sample = token / dropout.tokensPerSample;
  const uint64_t first = uint64_t((token - sample * dropout.tokensPerSample) * dropout.cols + c);
  const auto keptOf = [&](uint64_t group) {
    return dropout.rate > 0.0f ? dropoutKeepGroup(dropout.key, sample, group, dropout.rate) : ~0u;
  };
  uint64_t group = first / kDropoutGroupSize;
  uint32_t kept = keptOf(group);
#pragma unroll // constant indices keep `factor` in registers
  for (int j = 0; j < kDropoutGroupSize; ++j) {
    if (j >= columns)
      break;
    const uint64_t element = first + j;
    if (element / kDropoutGroupSize != group) {
      group = element / kDropoutGroupSize;
      kept = keptOf(group);
    }
    factor[j] = (kept >> (element % kDropoutGroupSize)) & 1u ? dropout.keptScale : 0.0f;
  }
}

/// x times its dropout factor; a dropped element is 0 whatever it held (inf and NaN too).
__device__ __forceinline__ float dropped(float x, float factor) {
  return factor != 0.0f ? x * factor : 0.0f;
}

/// The TokenDropout of dropout at `rate` (below 1).
inline TokenDropout tokenDropout(const DropoutKey &key, int64_t tokensPerSample, int64_t cols,
                                 float rate) {
  return {key, tokensPerSample, cols, rate, 1.0f / (1.0f - rate)};
}

} // namespace bertc::cuda
