// Attention by GEMMs over whole [seq, seq] matrices (an attention op with head_chunk > 0):
// the CPU twin of the CUDA trainer's tensor-core attention, step for step
// (cuda_chunked_attention.h), with the chunk's score blocks in the caller's workspace
// (abi/kernel_workspace.h). The scores are raw products q k^T; the scale, mask bias, dropout
// keys and fully masked rows are the fused kernels' (attention_common.h here,
// attention_common.cuh there), and P*Z and dS are rounded to the storage type in place in
// their blocks before the products that read them, so the two targets differ only by the
// GEMMs' order of summation. The threads share blocks of query rows of the chunk's
// (head, sequence) pairs, and blocks of key rows for dv and dk; each writes disjoint rows.
// With causal, a block's products stop at the keys (or start at the queries) it reaches:
// the CUDA GEMMs compute the rest, whose probabilities are 0, so both give the same values.
#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/cpu_kernels.h"

#include "attention_common.h"
#include "parallel.h"
#include "storage_types.h"
#include "vector_math.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace bertc::cpu {

namespace {
using cuda::attentionGroupedGradFloats;
using cuda::attentionPackedLd;
using cuda::attentionScoreBlockFloats;

/// The chunk of heads [firstHead, firstHead + heads) and its [seq, seq] matrices in a score
/// block: (head h of the chunk, sequence b) at float offset (h * batch + b) * seq * seq.
struct HeadChunk {
  int64_t firstHead, heads;

  float *matrix(float *block, const AttentionShape &shape, int64_t hLocal, int64_t b) const {
    return block + (hLocal * shape.batch + b) * shape.seq * shape.seq;
  }
};

/// Calls body(hLocal, b, rowBegin, rowEnd) for each block of kQueryRowBlock rows of each
/// (head, sequence) pair of the chunk, the blocks spread over the threads.
template <typename Body>
void forEachRowBlock(const HeadChunk &chunk, const AttentionShape &shape, const Body &body) {
  const int64_t blocks = (shape.seq + kQueryRowBlock - 1) / kQueryRowBlock;
  forEachChunk(chunk.heads * shape.batch * blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t pair = item / blocks, rowBegin = item % blocks * kQueryRowBlock;
      body(pair / shape.batch, pair % shape.batch, rowBegin,
           std::min(shape.seq, rowBegin + kQueryRowBlock));
    }
  });
}

/// A masked, scaled score with one rounding, as the CUDA kernels' maskedScore (fmaf).
inline float maskedScore(float raw, float scale, float maskBias) {
  return std::fma(raw, scale, maskBias);
}

/// The log-sum-exp m + log(sum_j exp(s_j - m)) of the first `reach` raw scores of a row
/// after scaling and masking: -FLT_MAX for a row with every key masked (-FLT_MAX + log reach
/// rounds to it). Out of line, so that its vectorised sum adds in one order at every call.
template <typename KeyBias>
[[gnu::noinline]] float rowLogSumExp(const float *raw, int64_t reach, float scale,
                                     const KeyBias &bias) {
  float rowMax = -FLT_MAX;
#pragma omp simd reduction(max : rowMax)
  for (int64_t j = 0; j < reach; ++j)
    rowMax = std::max(maskedScore(raw[j], scale, bias(j)), rowMax);
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < reach; ++j)
    sum += vectorExp(maskedScore(raw[j], scale, bias(j)) - rowMax);
  return rowMax + std::log(sum);
}

/// One row of raw scores rewritten in place as its probabilities exp(s_j - lse) over the
/// `reach` keys it reaches, or 1 / reach throughout them for a row with every key masked (the
/// CUDA kernels' probabilityFromLse), and 0 over the rest of its `keys`; the forward and the
/// backward both take them from lse, so they agree bit for bit.
template <typename KeyBias>
void probabilitiesFromRaw(float *row, int64_t reach, int64_t keys, float scale, const KeyBias &bias,
                          float lse) {
  if (lse == -FLT_MAX) {
    std::fill(row, row + reach, 1.0f / float(reach));
  } else {
#pragma omp simd
    for (int64_t j = 0; j < reach; ++j)
      row[j] = vectorExp(maskedScore(row[j], scale, bias(j)) - lse);
  }
  std::fill(row + reach, row + keys, 0.0f);
}

/// Rewrites a row of fp32 values as T from its first byte (a score block row read as T,
/// attentionPackedLd). Element j's bytes lie within the floats 0..j, already read, so the
/// rewrite runs front to back; memcpy tells the compiler that the T stores alias the floats.
template <typename T> void packRow(float *row, int64_t seq) {
  if constexpr (!std::is_same_v<T, float>) {
    char *bytes = reinterpret_cast<char *>(row);
    for (int64_t j = 0; j < seq; ++j) {
      const T value = fromFloat<T>(row[j]);
      std::memcpy(bytes + j * int64_t(sizeof(T)), &value, sizeof(T));
    }
  }
}

/// The T view of a [seq, seq] matrix whose rows packRow rewrote (leading dimension
/// attentionPackedLd<T>(seq)).
template <typename T> const T *packedRows(const float *matrix) {
  return reinterpret_cast<const T *>(matrix);
}
} // namespace

// Per chunk of headChunk heads (the last may have fewer), per block of query rows of each of
// its (head h, sequence b) pairs, the steps of the CUDA launches on those rows:
//   1. the raw scores q_h k_h^T into the pair's matrix of the score block;
//   2. per row: s_j = fma(raw_j, scale, maskBias_j), lse = m + log(sum_j exp(s_j - m))
//      (saved), P_j = exp(s_j - lse) (1 / reach for a fully masked row) times the dropout
//      factor Z_j (0 or 1 / (1 - rate)), rounded to T in place;
//   3. ctx_h = (P*Z) v_h for the block's rows, rounded once to T.
// A block's rows depend on nothing outside it, so running the three steps block by block
// gives the results of the CUDA order (each step over the whole chunk) while the rows are
// still in cache.
template <typename T>
void chunkedAttentionForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx,
                             float *lse, float *workspace, int64_t headChunk, int64_t batch,
                             int64_t seq, int64_t hidden, AttentionHeads heads, float dropoutRate,
                             const DropoutKey &key) {
  const AttentionShape shape(batch, seq, hidden, heads);
  const float scale = 1.0f / std::sqrt(float(shape.headDim()));
  const int64_t ldPacked = attentionPackedLd<T>(seq);
  for (int64_t firstHead = 0; firstHead < shape.heads; firstHead += headChunk) {
    const HeadChunk chunk{firstHead, std::min(headChunk, shape.heads - firstHead)};
    forEachRowBlock(chunk, shape, [&](int64_t hLocal, int64_t b, int64_t rowBegin, int64_t rowEnd) {
      const int64_t h = chunk.firstHead + hLocal, offset = shape.headOffset(b, h);
      const int64_t keys = shape.keyEnd(rowEnd);
      float *scores = chunk.matrix(workspace, shape, hLocal, b); // [seq, seq]
      headProductRows(q, k, 1.0f, scores, shape, b, h, rowBegin, rowEnd);
      for (int64_t i = rowBegin; i < rowEnd; ++i) {
        float *row = scores + i * seq;
        withRowMask(shape, mask, b, i, [&](int64_t reach, const auto &bias) {
          const float rowLse = rowLogSumExp(row, reach, scale, bias);
          lse[shape.statIndex(b, h, i)] = rowLse;
          probabilitiesFromRaw(row, reach, keys, scale, bias, rowLse);
        });
        if (dropoutRate > 0.0f)
          forEachRowFactorSpan(key, shape, b, h, i, keys, dropoutRate,
                               [&](int64_t j0, const float *factor, int64_t n) {
                                 for (int64_t t = 0; t < n; ++t)
                                   row[j0 + t] *= factor[t];
                               });
        packRow<T>(row, keys);
      }
      mixedGemm(false, false, rowEnd - rowBegin, shape.headDim(), keys, 1.0f,
                packedRows<T>(scores) + rowBegin * ldPacked, ldPacked, v + shape.kvHeadOffset(b, h),
                shape.kvHidden(), 0.0f, ctx + offset + rowBegin * hidden, hidden);
    });
  }
}

// With P the probabilities (from the saved lse), Z the dropout factors and r_i = dctx_i ·
// ctx_i the row term (= sum_j P_ij Z_ij dP_ij, as ctx_i = sum_j P_ij Z_ij v_j):
//   1. per chunk, per block of query rows of each (head h, sequence b) pair:
//      a. raw scores q_h k_h^T into block A, dP = dctx_h v_h^T into block B;
//      b. per row: r in fp32 from the stored T values; P as the forward's; A <- T(P Z),
//         B <- T(P (dP Z - r) scale), the fused backward's dS (a fully masked row takes
//         P = 1 / reach there too);
//      c. dq_h = dS k_h for the block's rows;
//   2. per chunk, per block of key rows of each pair: dv_h = (P Z)^T dctx_h, dk_h = dS^T q_h,
//      straight into dv and dk where a key/value head serves one query head, else in fp32
//      into the workspace's per-head gradients, which
//   3. per chunk, per block of key rows of each of its key/value heads, add up over the
//      group in order and become dv and dk, rounded once.
template <typename T>
void chunkedAttentionBackward(const T *dctx, const T *q, const T *k, const T *v,
                              const int32_t *mask, const T *ctx, const float *lse, float *workspace,
                              T *dq, T *dk, T *dv, int64_t headChunk, int64_t batch, int64_t seq,
                              int64_t hidden, AttentionHeads heads, float dropoutRate,
                              const DropoutKey &key) {
  const AttentionShape shape(batch, seq, hidden, heads);
  const int64_t headDim = shape.headDim(), ldPacked = attentionPackedLd<T>(seq);
  const int64_t group = shape.group(), kvLd = shape.kvHidden();
  const float scale = 1.0f / std::sqrt(float(headDim));
  float *blockA = workspace; // [headChunk, batch, seq, seq]
  float *blockB = blockA + attentionScoreBlockFloats(headChunk, batch, seq);
  // [headChunk, batch, seq, headDim] each, head-major (grouped-query attention only).
  float *keyGrads = blockB + attentionScoreBlockFloats(headChunk, batch, seq);
  float *valueGrads = keyGrads + attentionGroupedGradFloats(headChunk, batch, seq, headDim);
  const auto perHead = [&](float *grads, int64_t hLocal, int64_t b) {
    return grads + (hLocal * batch + b) * seq * headDim;
  };
  for (int64_t firstHead = 0; firstHead < shape.heads; firstHead += headChunk) {
    const HeadChunk chunk{firstHead, std::min(headChunk, shape.heads - firstHead)};
    forEachRowBlock(chunk, shape, [&](int64_t hLocal, int64_t b, int64_t rowBegin, int64_t rowEnd) {
      const int64_t h = chunk.firstHead + hLocal, offset = shape.headOffset(b, h);
      const int64_t keys = shape.keyEnd(rowEnd);
      float *probs = chunk.matrix(blockA, shape, hLocal, b);      // scores, then P*Z
      float *gradScores = chunk.matrix(blockB, shape, hLocal, b); // dP, then dS
      headProductRows(q, k, 1.0f, probs, shape, b, h, rowBegin, rowEnd);
      headProductRows(dctx, v, 1.0f, gradScores, shape, b, h, rowBegin, rowEnd);
      for (int64_t i = rowBegin; i < rowEnd; ++i) {
        float *pRow = probs + i * seq, *gRow = gradScores + i * seq;
        const float r = rowTerm(dctx, ctx, shape, b, h, i);
        withRowMask(shape, mask, b, i, [&](int64_t reach, const auto &bias) {
          probabilitiesFromRaw(pRow, reach, keys, scale, bias, lse[shape.statIndex(b, h, i)]);
        });
        if (dropoutRate > 0.0f) {
          forEachRowFactorSpan(key, shape, b, h, i, keys, dropoutRate,
                               [&](int64_t j0, const float *factor, int64_t n) {
                                 for (int64_t t = 0; t < n; ++t) {
                                   const int64_t j = j0 + t;
                                   gRow[j] = pRow[j] * (gRow[j] * factor[t] - r) * scale;
                                   pRow[j] *= factor[t];
                                 }
                               });
        } else {
#pragma omp simd
          for (int64_t j = 0; j < keys; ++j)
            gRow[j] = pRow[j] * (gRow[j] - r) * scale;
        }
        packRow<T>(pRow, keys);
        packRow<T>(gRow, keys);
      }
      mixedGemm(false, false, rowEnd - rowBegin, headDim, keys, 1.0f,
                packedRows<T>(gradScores) + rowBegin * ldPacked, ldPacked,
                k + shape.kvHeadOffset(b, h), kvLd, 0.0f, dq + offset + rowBegin * hidden, hidden);
    });
    forEachRowBlock(chunk, shape, [&](int64_t hLocal, int64_t b, int64_t keyBegin, int64_t keyEnd) {
      const int64_t h = chunk.firstHead + hLocal, offset = shape.headOffset(b, h);
      const int64_t keys = keyEnd - keyBegin, first = shape.firstQuery(keyBegin);
      // dv and dk of the block's keys, over the queries that reach them.
      const auto keyGradsInto = [&](auto *valueGrad, auto *keyGrad, int64_t ldGrad) {
        mixedGemm(true, false, keys, headDim, seq - first, 1.0f,
                  packedRows<T>(chunk.matrix(blockA, shape, hLocal, b)) + first * ldPacked +
                      keyBegin,
                  ldPacked, dctx + offset + first * hidden, hidden, 0.0f,
                  valueGrad + keyBegin * ldGrad, ldGrad);
        mixedGemm(true, false, keys, headDim, seq - first, 1.0f,
                  packedRows<T>(chunk.matrix(blockB, shape, hLocal, b)) + first * ldPacked +
                      keyBegin,
                  ldPacked, q + offset + first * hidden, hidden, 0.0f, keyGrad + keyBegin * ldGrad,
                  ldGrad);
      };
      if (group == 1)
        keyGradsInto(dv + shape.kvHeadOffset(b, h), dk + shape.kvHeadOffset(b, h), kvLd);
      else
        keyGradsInto(perHead(valueGrads, hLocal, b), perHead(keyGrads, hLocal, b), headDim);
    });
    if (group == 1)
      continue;
    const HeadChunk kvChunk{chunk.firstHead / group, chunk.heads / group};
    forEachRowBlock(
        kvChunk, shape, [&](int64_t kvLocal, int64_t b, int64_t keyBegin, int64_t keyEnd) {
          const int64_t kvOffset = shape.kvHeadOffset(b, chunk.firstHead + kvLocal * group);
          for (int64_t j = keyBegin; j < keyEnd; ++j)
            for (int64_t c = 0; c < headDim; ++c) {
              float keySum = 0.0f, valueSum = 0.0f;
              for (int64_t member = 0; member < group; ++member) {
                const int64_t at = j * headDim + c, hLocal = kvLocal * group + member;
                keySum += perHead(keyGrads, hLocal, b)[at];
                valueSum += perHead(valueGrads, hLocal, b)[at];
              }
              dk[kvOffset + j * kvLd + c] = fromFloat<T>(keySum);
              dv[kvOffset + j * kvLd + c] = fromFloat<T>(valueSum);
            }
        });
  }
}

#define INSTANTIATE(T)                                                                             \
  template void chunkedAttentionForward(const T *, const T *, const T *, const int32_t *, T *,     \
                                        float *, float *, int64_t, int64_t, int64_t, int64_t,      \
                                        AttentionHeads, float, const DropoutKey &);                \
  template void chunkedAttentionBackward(const T *, const T *, const T *, const T *,               \
                                         const int32_t *, const T *, const float *, float *, T *,  \
                                         T *, T *, int64_t, int64_t, int64_t, int64_t,             \
                                         AttentionHeads, float, const DropoutKey &);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
