// The tensor-core attention's backward (attention_chunked.cuh): per chunk of heads, q k^T
// and dctx v^T as one batched GEMM, the row kernel (the row term, P*Z and dS rounded to T in
// place), then dv with dk and dq; with grouped-query heads, dv and dk per query head in fp32
// and a kernel that sums each group's.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_chunked_attention.h"

#include "attention_chunked.cuh"
#include "launch.cuh"
#include "warp_reduce.cuh"

#include <algorithm>

namespace bertc::cuda {

namespace attention {
namespace {

/// The masked, scaled scores of keys first .. first + count - 1 of a row of sequence b,
/// -inf past them: the raw values and the mask words a load each where they are aligned.
/// The backward reads its scores so; the forward reads them a key at a time (keyScore),
/// which an H200 ran faster (0.61 against 0.72 ms for BERT-base's forward at seq 512).
__device__ void laneScores(const float *raw, const int32_t *mask, const Params &p, BlockRow at,
                           int32_t word, int64_t first, int count, float (&score)[kLaneKeys]) {
  float dot[kLaneKeys];
  int32_t words[kLaneKeys];
  loadFloats(raw + first, count, dot);
  loadValues(mask + at.b * p.seq + first, count, words);
#pragma unroll // constant indices keep the arrays in registers
  for (int k = 0; k < kLaneKeys; ++k)
    score[k] =
        k < count ? maskedScore(dot[k], p.scale,
                                visibleBias(p, maskBias(words[k]), words[k], word, at.i, first + k))
                  : -INFINITY;
}

/// Backward: a row of raw scores becomes T(P*Z) and the same row of dctx·v becomes
/// T(dS) = T(P (dP Z - r) / sqrt(d)), both in place, as the fused backward computes them;
/// the row term r = dctx_i · ctx_i is summed here, in the row's warp.
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    backwardRowKernel(float *scores, float *probGrads, const T *dctx, const T *ctx,
                      const int32_t *mask, int64_t firstHead, int64_t rows, Params p) {
  const int64_t row = int64_t(blockIdx.x) * kRowsPerRowBlock + threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  if (row >= rows) // the whole warp
    return;
  const BlockRow at = blockRow(p, firstHead, row);
  const float rowLse = p.lse[p.statIndex(at.b, at.h, at.i)];
  const float term = headRowTerm(dctx, ctx, p.tokenOffset(at.b, at.i, at.h), p.headDim);
  const int32_t word = documentWord(mask, p, at.b, at.i);
  float *raw = scores + row * p.seq, *rawGrad = probGrads + row * p.seq;
  T *packed = reinterpret_cast<T *>(raw), *packedGrad = reinterpret_cast<T *>(rawGrad);
  for (int64_t sweep = 0; sweep < p.seq; sweep += kSweepKeys) {
    const int64_t first = sweep + int64_t(lane) * kLaneKeys;
    const int count = laneKeys(p, first);
    const uint32_t kept = keepBits<1>(p, at.b, p.dropoutIndex(at.h, at.i, first), count, 0);
    float keptProb[kLaneKeys], scoreGrad[kLaneKeys];
    laneScores(raw, mask, p, at, word, first, count, keptProb);
    loadFloats(rawGrad + first, count, scoreGrad);
#pragma unroll // constant indices keep both in registers
    for (int k = 0; k < kLaneKeys; ++k) {
      const float prob = k < count ? probabilityFromLse(keptProb[k], rowLse, p.reach(at.i)) : 0.0f;
      const float factor = dropoutFactor(p, kept, k);
      keptProb[k] = prob * factor;
      scoreGrad[k] = prob * (scoreGrad[k] * factor - term) * p.scale;
    }
    __syncwarp(); // the sweep's fp32 values are read before T values overwrite them
    storeRoundedFloats(packed + first, count, keptProb);
    storeRoundedFloats(packedGrad + first, count, scoreGrad);
  }
}

/// dk and dv of the key/value heads of a chunk from firstHead of chunkHeads query heads: each
/// the sum over its group of the query heads' fp32 gradients (keyGrads, valueGrads:
/// attentionGroupedGradFloats each, head-major), added in order and rounded once.
template <typename T>
__global__ void groupSumKernel(const float *keyGrads, const float *valueGrads, T *dk, T *dv,
                               int64_t firstHead, int64_t chunkHeads, Params p) {
  const int64_t group = p.group(), perHead = p.batch * p.seq * p.headDim;
  const int64_t elements = chunkHeads / group * perHead;
  for (int64_t e = gridStrideBegin(); e < elements; e += gridStride()) {
    const int64_t kvLocal = e / perHead, at = e % perHead;
    const int64_t c = at % p.headDim, i = (at / p.headDim) % p.seq, b = at / (p.seq * p.headDim);
    float keySum = 0.0f, valueSum = 0.0f;
    for (int64_t member = 0; member < group; ++member) {
      keySum += keyGrads[(kvLocal * group + member) * perHead + at];
      valueSum += valueGrads[(kvLocal * group + member) * perHead + at];
    }
    const int64_t offset = p.kvTokenOffset(b, i, firstHead / group + kvLocal) + c;
    storeFloat(dk + offset, keySum);
    storeFloat(dv + offset, valueSum);
  }
}

/// A chunk's fp32 gradients per query head (attentionGroupedGradFloats): per head of the
/// chunk, `batch` [seq, headDim] matrices.
inline BatchedOutput<float> perHeadOutput(float *grads, const Params &p) {
  return {grads, p.headDim, p.seq * p.headDim, p.batch * p.seq * p.headDim};
}

} // namespace
} // namespace attention

template <typename T>
void chunkedAttentionBackward(LinearGemms &gemms, const T *dctx, const T *q, const T *k, const T *v,
                              const int32_t *mask, const T *ctx, const float *lse, float *workspace,
                              T *dq, T *dk, T *dv, int64_t headChunk, int64_t batch, int64_t seq,
                              int64_t hidden, AttentionHeads heads, float dropoutRate,
                              const DropoutKey &key, GemmMath math) {
  using namespace attention;
  const Params p = chunkedParams(headChunk, batch, seq, hidden, heads, dropoutRate, key, lse);
  if (batch == 0 || seq == 0)
    return;
  // The workspace: the score block that becomes P*Z, then the one that becomes dS, then
  // (grouped-query heads) dk and dv per query head of the chunk.
  float *probs = workspace;
  float *probGrads = probs + attentionScoreBlockFloats(headChunk, batch, seq);
  float *keyGrads = probGrads + attentionScoreBlockFloats(headChunk, batch, seq);
  float *valueGrads = keyGrads + attentionGroupedGradFloats(headChunk, batch, seq, p.headDim);
  const int64_t d = p.headDim;
  for (int64_t firstHead = 0; firstHead < p.heads; firstHead += headChunk) {
    const int64_t chunkHeads = std::min(headChunk, p.heads - firstHead);
    const auto head = [&](const T *x, bool transposed) {
      return headOperand(x, p, firstHead, transposed);
    };
    const auto keyHead = [&](const T *x, bool transposed) {
      return keyHeadOperand(x, p, firstHead, transposed);
    };
    // Q K^T and dctx V^T, then dV = P^T dctx and dK = dS^T Q, share their layouts: a call
    // each; dQ = dS K another.
    const int scores = gemms.listBatchedGemms<T, float>(
        {{head(q, false), keyHead(k, true), blockOutput(probs, p)},
         {head(dctx, false), keyHead(v, true), blockOutput(probGrads, p)}},
        seq, seq, d, batch, chunkHeads, math);
    const int valueAndKey =
        p.group() == 1
            ? gemms.listBatchedGemms<T, T>({{packedOperand<T>(probs, p, true), head(dctx, false),
                                             headOutput(dv, p, firstHead)},
                                            {packedOperand<T>(probGrads, p, true), head(q, false),
                                             headOutput(dk, p, firstHead)}},
                                           seq, d, seq, batch, chunkHeads, math)
            : gemms.listBatchedGemms<T, float>({{packedOperand<T>(probs, p, true),
                                                 head(dctx, false), perHeadOutput(valueGrads, p)},
                                                {packedOperand<T>(probGrads, p, true),
                                                 head(q, false), perHeadOutput(keyGrads, p)}},
                                               seq, d, seq, batch, chunkHeads, math);
    const int query = gemms.listBatchedGemms<T, T>(
        {{packedOperand<T>(probGrads, p, false), keyHead(k, false), headOutput(dq, p, firstHead)}},
        seq, d, seq, batch, chunkHeads, math);
    gemms.fillListed();
    gemms.runListed(scores);
    const int64_t rows = chunkHeads * batch * seq;
    BERTC_LAUNCH((backwardRowKernel<T>), rowBlocks(rows), kRowThreads, 0, gemms.stream(), probs,
                 probGrads, dctx, ctx, mask, firstHead, rows, p);
    gemms.runListed(valueAndKey);
    gemms.runListed(query);
    if (p.group() > 1)
      BERTC_LAUNCH((groupSumKernel<T>), gridFor(chunkHeads / p.group() * batch * seq * d),
                   kElementwiseThreads, 0, gemms.stream(), keyGrads, valueGrads, dk, dv, firstHead,
                   chunkHeads, p);
  }
}

#define INSTANTIATE(T)                                                                             \
  template void chunkedAttentionBackward(                                                          \
      LinearGemms &, const T *, const T *, const T *, const T *, const int32_t *, const T *,       \
      const float *, float *, T *, T *, T *, int64_t, int64_t, int64_t, int64_t, AttentionHeads,   \
      float, const DropoutKey &, GemmMath);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
