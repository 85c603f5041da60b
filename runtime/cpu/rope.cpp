// Rotary position embeddings on the CPU, as transformers' apply_rotary_pos_emb with
// rotate_half. Each token's angles (position * inv_freq[i], an fp32 product) and their
// cos and sin (fp32 sincosf) are computed once and shared by its heads; the rotation is
// computed in fp32 and rounded once to the storage type. The backward is the same rotation
// by the opposite angles. Tokens are split over the threads (parallel.h).
#include "bertc/runtime/cpu_kernels.h"

#include "parallel.h"
#include "storage_types.h"

#include <cmath>

namespace bertc::cpu {

namespace {
/// Tokens one thread rotates at a time.
constexpr int64_t kTokenChunk = 16;

/// Rotates the pairs (i, i + d/2) of every head of [tokens, heads * 2 * half] `in` by
/// `sign` * position * invFreq[i] into `out` (which may be `in`: a pair is read before it
/// is written).
template <typename T>
void rotatePairs(const T *in, const int32_t *positions, T *out, int64_t tokens, int64_t heads,
                 int64_t half, const float *invFreq, float sign) {
  const int64_t headDim = 2 * half, cols = heads * headDim;
  forEachChunk(tokens, kTokenChunk, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float position = float(positions[t]);
      for (int64_t i = 0; i < half; ++i) {
        float sine = 0.0f, cosine = 0.0f;
        sincosf(position * invFreq[i], &sine, &cosine);
        sine *= sign;
        for (int64_t h = 0; h < heads; ++h) {
          const int64_t first = t * cols + h * headDim + i;
          const float x1 = toFloat(in[first]), x2 = toFloat(in[first + half]);
          out[first] = fromFloat<T>(x1 * cosine - x2 * sine);
          out[first + half] = fromFloat<T>(x2 * cosine + x1 * sine);
        }
      }
    }
  });
}
} // namespace

template <typename T>
void ropeForward(const T *x, const int32_t *positions, T *y, int64_t tokens, int64_t heads,
                 int64_t headDim, const float *invFreq) {
  rotatePairs(x, positions, y, tokens, heads, headDim / 2, invFreq, 1.0f);
}

template <typename T>
void ropeBackward(const T *dy, const int32_t *positions, T *dx, int64_t tokens, int64_t heads,
                  int64_t headDim, const float *invFreq) {
  rotatePairs(dy, positions, dx, tokens, heads, headDim / 2, invFreq, -1.0f);
}

#define INSTANTIATE(T)                                                                             \
  template void ropeForward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t,            \
                            const float *);                                                        \
  template void ropeBackward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t,           \
                             const float *);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
