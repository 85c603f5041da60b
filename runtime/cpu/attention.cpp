// Multi-head self-attention on the CPU, one (batch, head) pair at a time, so that at most two
// [seq, seq] matrices exist at once, in the caller's scratch; the threads share a pair's
// blocks of query rows (and of key rows for dv and dk), which write disjoint rows.
// Heads are read and written in place inside the [batch, seq, hidden] tensors (a leading dimension
// of hidden, kv_heads * d for the key-shaped ones), so no head is ever copied out, and a key/value
// head serves its group of query heads where it lies; the per-head GEMMs go through mixedGemm (fp32
// accumulation whatever the storage type). Probabilities and softmax are always fp32. The
// forward saves each query row's log-sum-exp, from which the backward recomputes them. With
// causal, a block of query rows computes only the keys up to its last row, and a block of keys
// only the query rows from its first.
#include "bertc/runtime/cpu_kernels.h"

#include "attention_common.h"
#include "parallel.h"
#include "storage_types.h"
#include "vector_math.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace bertc::cpu {

namespace {
/// Turns the first `reach` scores (already scaled) of a row into softmax probabilities in
/// place, adding each key's mask bias first (so a row with every key masked becomes uniform
/// over them, as in Hugging Face BERT), and zeroes the rest of its `keys` (those a causal row
/// does not reach). Returns the row's log-sum-exp: -FLT_MAX for a row with every key masked
/// (log reach is absorbed). Out of line, so that its vectorised sum adds in one order at every
/// call.
template <typename KeyBias>
[[gnu::noinline]] float maskedSoftmaxRow(float *row, int64_t reach, int64_t keys,
                                         const KeyBias &bias) {
  float rowMax = -FLT_MAX;
#pragma omp simd reduction(max : rowMax)
  for (int64_t j = 0; j < reach; ++j) {
    row[j] += bias(j);
    rowMax = std::max(row[j], rowMax);
  }
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < reach; ++j) {
    row[j] = vectorExp(row[j] - rowMax);
    sum += row[j];
  }
  const float invSum = 1.0f / sum;
  for (int64_t j = 0; j < reach; ++j)
    row[j] *= invSum;
  std::fill(row + reach, row + keys, 0.0f);
  return rowMax + std::log(sum);
}

/// The forward's probabilities of one row from its scores (already scaled) and its
/// log-sum-exp, in place: exp(s + maskBias - lse) for the `reach` keys it reaches, or
/// 1 / reach throughout them for a row with every key masked (lse -FLT_MAX,
/// maskedSoftmaxRow), and 0 for the rest of its `keys`.
template <typename KeyBias>
void probabilitiesFromLse(float *row, int64_t reach, int64_t keys, const KeyBias &bias, float lse) {
  if (lse == -FLT_MAX) {
    std::fill(row, row + reach, 1.0f / float(reach));
  } else {
#pragma omp simd
    for (int64_t j = 0; j < reach; ++j)
      row[j] = vectorExp(row[j] + bias(j) - lse);
  }
  std::fill(row + reach, row + keys, 0.0f);
}

} // namespace

// Per (batch b, head h), the query rows split in blocks that the threads share, per block
// (over the keys it reaches: all, or with causal those up to its last row):
//   1. P = softmax(q_h k_h^T / sqrt(d) + maskBias) into the block's rows of scratch, each
//      row's log-sum-exp into lse;
//   2. P = dropout(P) in place, element (i, j) keyed by the documented index;
//   3. ctx_h = P v_h for the block's rows, written straight into ctx's head columns.
template <typename T>
void attentionForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                      float *scratch, int64_t batch, int64_t seq, int64_t hidden,
                      AttentionHeads heads, float dropoutRate, const DropoutKey &key) {
  const AttentionShape shape(batch, seq, hidden, heads);
  const float scale = 1.0f / std::sqrt(float(shape.headDim()));
  float *probs = scratch; // [seq, seq]
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < shape.heads; ++h) {
      const int64_t offset = shape.headOffset(b, h);
      forEachChunk(seq, kQueryRowBlock, [&](int64_t rowBegin, int64_t rowEnd) {
        const int64_t keys = shape.keyEnd(rowEnd);
        headProductRows(q, k, scale, probs, shape, b, h, rowBegin, rowEnd);
        for (int64_t i = rowBegin; i < rowEnd; ++i)
          withRowMask(shape, mask, b, i, [&](int64_t reach, const auto &bias) {
            lse[shape.statIndex(b, h, i)] = maskedSoftmaxRow(probs + i * seq, reach, keys, bias);
          });
        if (dropoutRate > 0.0f)
          for (int64_t i = rowBegin; i < rowEnd; ++i) {
            float *row = probs + i * seq;
            forEachRowFactorSpan(key, shape, b, h, i, keys, dropoutRate,
                                 [&](int64_t j0, const float *factor, int64_t n) {
                                   for (int64_t t = 0; t < n; ++t)
                                     row[j0 + t] *= factor[t];
                                 });
          }
        mixedGemm(false, false, rowEnd - rowBegin, shape.headDim(), keys, 1.0f,
                  probs + rowBegin * seq, seq, v + shape.kvHeadOffset(b, h), shape.kvHidden(), 0.0f,
                  ctx + offset + rowBegin * hidden, hidden);
      });
    }
  }
}

// With P the softmax probabilities, M the scaled dropout mask (keep / (1 - rate) or 0) and
// D = P * M the probabilities the forward multiplied v by, per (batch b, key/value head),
// per query head h of its group:
//   1. per block of query rows (the threads sharing the blocks):
//      a. P = exp(q_h k_h^T / sqrt(d) + maskBias - lse) (scratch block A), G = dctx_h v_h^T,
//         the gradient with respect to D (scratch block B);
//      b. per row i: G = G * M (now dL/dP), marking the dropped entries of P by negating
//         them (P is never negative, so its sign carries M_i to step d without a second
//         Philox call or a scratch row);
//      c. r_i = dctx_i · ctx_i (= sum_j P_ij G_ij, as ctx_i = sum_j D_ij v_j),
//         G_ij = P_ij (G_ij - r_i) / sqrt(d), the gradient with respect to the scores;
//      d. A = P * M = D, as P is no longer needed;
//      e. dq_h = G k_h for the block's rows;
//   2. per block of key rows: dv_h = D^T dctx_h and dk_h = G^T q_h for those rows, written
//      straight into dv and dk where the group is one head, else added over the group's
//      heads into fp32 sums in scratch, which
//   3. become dv and dk, rounded once.
template <typename T>
void attentionBackward(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                       const T *ctx, const float *lse, T *dq, T *dk, T *dv, float *scratch,
                       int64_t batch, int64_t seq, int64_t hidden, AttentionHeads heads,
                       float dropoutRate, const DropoutKey &key) {
  const AttentionShape shape(batch, seq, hidden, heads);
  const int64_t headDim = shape.headDim(), group = shape.group();
  const float scale = 1.0f / std::sqrt(float(headDim));
  const bool dropout = dropoutRate > 0.0f;
  const float keptScale = dropout ? 1.0f / (1.0f - dropoutRate) : 1.0f;
  float *probs = scratch;                  // [seq, seq]: P, then D
  float *gradScores = scratch + seq * seq; // [seq, seq]: dL/dD, then dL/d(q k^T)
  // [seq, headDim] each, past the unused row (attentionScratchFloats): a group's dk and dv.
  float *keyGradSum = gradScores + seq * seq + seq, *valueGradSum = keyGradSum + seq * headDim;
  const int64_t ld = hidden, kvLd = shape.kvHidden(), n = seq, d = headDim;

  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t kvHead = 0; kvHead < shape.kvHeads; ++kvHead) {
      const int64_t kvOffset = shape.kvHeadOffset(b, kvHead * group);
      for (int64_t member = 0; member < group; ++member) {
        const int64_t h = kvHead * group + member, offset = shape.headOffset(b, h);
        forEachChunk(seq, kQueryRowBlock, [&](int64_t rowBegin, int64_t rowEnd) {
          const int64_t rows = rowEnd - rowBegin, keys = shape.keyEnd(rowEnd);
          headProductRows(q, k, scale, probs, shape, b, h, rowBegin, rowEnd);
          headProductRows(dctx, v, 1.0f, gradScores, shape, b, h, rowBegin, rowEnd);
          for (int64_t i = rowBegin; i < rowEnd; ++i) {
            float *pRow = probs + i * seq;
            float *gRow = gradScores + i * seq;
            withRowMask(shape, mask, b, i, [&](int64_t reach, const auto &bias) {
              probabilitiesFromLse(pRow, reach, keys, bias, lse[shape.statIndex(b, h, i)]);
            });
            if (dropout)
              forEachRowFactorSpan(key, shape, b, h, i, keys, dropoutRate,
                                   [&](int64_t j0, const float *factor, int64_t n) {
                                     for (int64_t t = 0; t < n; ++t) {
                                       const int64_t j = j0 + t;
                                       gRow[j] *= factor[t];
                                       pRow[j] = factor[t] != 0.0f ? pRow[j] : -pRow[j];
                                     }
                                   });
            const float r = rowTerm(dctx, ctx, shape, b, h, i);
            for (int64_t j = 0; j < keys; ++j)
              gRow[j] = std::fabs(pRow[j]) * (gRow[j] - r) * scale;
            if (dropout)
              for (int64_t j = 0; j < keys; ++j)
                pRow[j] = std::signbit(pRow[j]) ? 0.0f : pRow[j] * keptScale;
          }
          mixedGemm(false, false, rows, d, keys, 1.0f, gradScores + rowBegin * n, n, k + kvOffset,
                    kvLd, 0.0f, dq + offset + rowBegin * ld, ld);
        });
        forEachChunk(seq, kQueryRowBlock, [&](int64_t keyBegin, int64_t keyEnd) {
          const int64_t keys = keyEnd - keyBegin, first = shape.firstQuery(keyBegin);
          // dv and dk of the block's keys, over the queries that reach them.
          const auto keyGrads = [&](auto *valueGrad, auto *keyGrad, int64_t ldGrad, float beta) {
            mixedGemm(true, false, keys, d, n - first, 1.0f, probs + first * n + keyBegin, n,
                      dctx + offset + first * ld, ld, beta, valueGrad + keyBegin * ldGrad, ldGrad);
            mixedGemm(true, false, keys, d, n - first, 1.0f, gradScores + first * n + keyBegin, n,
                      q + offset + first * ld, ld, beta, keyGrad + keyBegin * ldGrad, ldGrad);
          };
          if (group == 1)
            keyGrads(dv + kvOffset, dk + kvOffset, kvLd, 0.0f);
          else
            keyGrads(valueGradSum, keyGradSum, d, member == 0 ? 0.0f : 1.0f);
        });
      }
      if (group > 1)
        forEachChunk(seq, kQueryRowBlock, [&](int64_t keyBegin, int64_t keyEnd) {
          for (int64_t j = keyBegin; j < keyEnd; ++j)
            for (int64_t c = 0; c < d; ++c) {
              dk[kvOffset + j * kvLd + c] = fromFloat<T>(keyGradSum[j * d + c]);
              dv[kvOffset + j * kvLd + c] = fromFloat<T>(valueGradSum[j * d + c]);
            }
        });
    }
  }
}

#define INSTANTIATE(T)                                                                             \
  template void attentionForward(const T *, const T *, const T *, const int32_t *, T *, float *,   \
                                 float *, int64_t, int64_t, int64_t, AttentionHeads, float,        \
                                 const DropoutKey &);                                              \
  template void attentionBackward(const T *, const T *, const T *, const T *, const int32_t *,     \
                                  const T *, const float *, T *, T *, T *, float *, int64_t,       \
                                  int64_t, int64_t, AttentionHeads, float, const DropoutKey &);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
