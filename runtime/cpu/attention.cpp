// Multi-head self-attention on the CPU, one (batch, head) pair at a time, so that at most two
// [seq, seq] matrices (and one row of dropout factors) exist at once, in the caller's scratch.
// Heads are read and written in place inside the [batch, seq, hidden] tensors (a leading dimension
// of hidden), so no head is ever copied out; the per-head GEMMs go through mixedGemm (fp32
// accumulation whatever the storage type). Probabilities and softmax are always fp32.
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"

#include "mixed_gemm.h"
#include "storage_types.h"

#include <cfloat>
#include <cmath>

namespace bertc::cpu {

namespace {
/// The shape of one attention call and the offsets of one (batch, head) slice in it.
struct AttentionShape {
  int64_t batch, seq, hidden, heads;

  int64_t headDim() const { return hidden / heads; }
  /// Offset of head h of sequence b in a [batch, seq, hidden] tensor.
  int64_t headOffset(int64_t b, int64_t h) const { return b * seq * hidden + h * headDim(); }
  /// Dropout index, within row b of the batch, of probability (i, 0) of head h.
  uint64_t dropoutIndexInRow(int64_t h, int64_t i) const { return uint64_t((h * seq + i) * seq); }
};

/// Turns scores (already scaled) into softmax probabilities in place, adding -FLT_MAX to
/// keys whose mask entry is 0 first (so a row with every key masked becomes uniform, as in
/// Hugging Face BERT).
void maskedSoftmaxRows(float *scores, const int32_t *keyMask, int64_t seq) {
  for (int64_t i = 0; i < seq; ++i) {
    float *row = scores + i * seq;
    float rowMax = -FLT_MAX;
    for (int64_t j = 0; j < seq; ++j) {
      if (keyMask[j] == 0)
        row[j] += -FLT_MAX;
      rowMax = row[j] > rowMax ? row[j] : rowMax;
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < seq; ++j) {
      row[j] = std::exp(row[j] - rowMax);
      sum += row[j];
    }
    const float invSum = 1.0f / sum;
    for (int64_t j = 0; j < seq; ++j)
      row[j] *= invSum;
  }
}

/// factors[j] = keptScale where dropout keeps probability (i, j) of head h of sequence b and 0
/// where it drops it, for j < seq. The row's indices are consecutive: one Philox call
/// decides each group of four (dropoutKeepGroup), the first and last perhaps in part.
void rowDropoutFactors(const DropoutKey &key, const AttentionShape &shape, int64_t b, int64_t h,
                       int64_t i, float rate, float keptScale, float *factors) {
  const uint64_t first = shape.dropoutIndexInRow(h, i), end = first + uint64_t(shape.seq);
  for (uint64_t group = first / kDropoutGroupSize; group * kDropoutGroupSize < end; ++group) {
    const uint32_t kept = dropoutKeepGroup(key, b, group, rate);
    for (int k = 0; k < kDropoutGroupSize; ++k) {
      const uint64_t index = group * kDropoutGroupSize + uint64_t(k);
      if (index >= first && index < end)
        factors[index - first] = (kept >> k) & 1u ? keptScale : 0.0f;
    }
  }
}

/// probs = softmax(q_h k_h^T / sqrt(d) + maskBias) for one (batch, head), into [seq, seq].
template <typename T>
void headProbabilities(const T *q, const T *k, const int32_t *mask, float *probs,
                       const AttentionShape &shape, int64_t b, int64_t h) {
  const int64_t seq = shape.seq, headDim = shape.headDim();
  const int64_t offset = shape.headOffset(b, h);
  const float scale = 1.0f / std::sqrt(float(headDim));
  mixedGemm(false, true, seq, seq, headDim, scale, q + offset, shape.hidden, k + offset,
            shape.hidden, 0.0f, probs, seq);
  maskedSoftmaxRows(probs, mask + b * seq, seq);
}
} // namespace

// Per (batch b, head h):
//   1. P = softmax(q_h k_h^T / sqrt(d) + maskBias) into scratch;
//   2. P = dropout(P) in place, element (i, j) keyed by the documented index (each row's
//      factors in the scratch row after the two [seq, seq] blocks);
//   3. ctx_h = P v_h, written straight into ctx's head columns.
template <typename T>
void attentionForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx,
                      float *scratch, int64_t batch, int64_t seq, int64_t hidden, int64_t heads,
                      float dropoutRate, const DropoutKey &key) {
  const AttentionShape shape{batch, seq, hidden, heads};
  float *probs = scratch;                      // [seq, seq]
  float *rowFactors = scratch + 2 * seq * seq; // [seq]
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      headProbabilities(q, k, mask, probs, shape, b, h);
      if (dropoutRate > 0.0f) {
        const float keptScale = 1.0f / (1.0f - dropoutRate);
        for (int64_t i = 0; i < seq; ++i) {
          rowDropoutFactors(key, shape, b, h, i, dropoutRate, keptScale, rowFactors);
          for (int64_t j = 0; j < seq; ++j)
            probs[i * seq + j] *= rowFactors[j];
        }
      }
      const int64_t offset = shape.headOffset(b, h);
      mixedGemm(false, false, seq, shape.headDim(), seq, 1.0f, probs, seq, v + offset, hidden, 0.0f,
                ctx + offset, hidden);
    }
  }
}

// With P the softmax probabilities, M the scaled dropout mask (keep / (1 - rate) or 0) and
// D = P * M the probabilities the forward multiplied v by, per (batch b, head h):
//   1. P = recomputed probabilities (scratch block A);
//   2. G = dctx_h v_h^T, the gradient with respect to D (scratch block B);
//   3. per row i: regenerate the row's factors M_i (scratch block C), G = G * M (now dL/dP),
//      r_i = sum_j P_ij G_ij, G_ij = P_ij (G_ij - r_i) / sqrt(d), the gradient with respect
//      to the scores q k^T; then A = P * M = D, as P is no longer needed;
//   4. dv_h = D^T dctx_h, dq_h = G k_h, dk_h = G^T q_h.
template <typename T>
void attentionBackward(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                       T *dq, T *dk, T *dv, float *scratch, int64_t batch, int64_t seq,
                       int64_t hidden, int64_t heads, float dropoutRate, const DropoutKey &key) {
  const AttentionShape shape{batch, seq, hidden, heads};
  const int64_t headDim = shape.headDim();
  const float scale = 1.0f / std::sqrt(float(headDim));
  const bool dropout = dropoutRate > 0.0f;
  const float keptScale = dropout ? 1.0f / (1.0f - dropoutRate) : 1.0f;
  float *probs = scratch;                      // [seq, seq]: P, then D
  float *gradScores = scratch + seq * seq;     // [seq, seq]: dL/dD, then dL/d(q k^T)
  float *rowFactors = scratch + 2 * seq * seq; // [seq]: M_i
  const int64_t ld = hidden, n = seq, d = headDim;

  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t offset = shape.headOffset(b, h);
      headProbabilities(q, k, mask, probs, shape, b, h);
      mixedGemm(false, true, n, n, d, 1.0f, dctx + offset, ld, v + offset, ld, 0.0f, gradScores, n);
      for (int64_t i = 0; i < seq; ++i) {
        float *pRow = probs + i * seq;
        float *gRow = gradScores + i * seq;
        if (dropout) {
          rowDropoutFactors(key, shape, b, h, i, dropoutRate, keptScale, rowFactors);
          for (int64_t j = 0; j < seq; ++j)
            gRow[j] *= rowFactors[j];
        }
        float rowDot = 0.0f;
        for (int64_t j = 0; j < seq; ++j)
          rowDot += pRow[j] * gRow[j];
        for (int64_t j = 0; j < seq; ++j)
          gRow[j] = pRow[j] * (gRow[j] - rowDot) * scale;
        if (dropout)
          for (int64_t j = 0; j < seq; ++j)
            pRow[j] *= rowFactors[j];
      }
      mixedGemm(true, false, n, d, n, 1.0f, probs, n, dctx + offset, ld, 0.0f, dv + offset, ld);
      mixedGemm(false, false, n, d, n, 1.0f, gradScores, n, k + offset, ld, 0.0f, dq + offset, ld);
      mixedGemm(true, false, n, d, n, 1.0f, gradScores, n, q + offset, ld, 0.0f, dk + offset, ld);
    }
  }
}

#define INSTANTIATE(T)                                                                             \
  template void attentionForward(const T *, const T *, const T *, const int32_t *, T *, float *,   \
                                 int64_t, int64_t, int64_t, int64_t, float, const DropoutKey &);   \
  template void attentionBackward(const T *, const T *, const T *, const T *, const int32_t *,     \
                                  T *, T *, T *, float *, int64_t, int64_t, int64_t, int64_t,      \
                                  float, const DropoutKey &);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
