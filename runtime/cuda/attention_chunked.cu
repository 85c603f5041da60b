// The tensor-core attention (cuda_chunked_attention.h): per chunk of headChunk heads, each
// product is one batched cuBLASLt GEMM over the chunk's heads and the batch (a group of
// sequences per head; in the backward, two products of one layout share a GEMM), the
// chunk's GEMMs listed so that one kernel fills all their pointer arrays
// (LinearGemms::listBatchedGemms), with the chunk's [seq, seq] matrices in score blocks of
// the workspace (abi/kernel_workspace.h); between the products, one row kernel over every
// row of the chunk does the softmax and dropout (forward) or the row term, P*Z and dS
// (backward), with the scores, mask bias, probabilities and dropout bits of the fused
// kernels (attention_common.cuh).
//
// A row kernel gives each row a warp, and each lane four adjacent keys at a time (one
// dropout group's worth: keepBits<1> decides them with one Philox call, two where the row's
// indices do not start a group), so a sweep of the warp covers 128 keys. It rewrites the row's fp32
// values as T in place from the row's first byte: T value j overwrites fp32 values up to j only, so
// each sweep reads its fp32 values, syncs, then writes its T values over what this sweep or an
// earlier one has read.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_chunked_attention.h"

#include "attention_common.cuh"
#include "launch.cuh"
#include "warp_reduce.cuh"

#include <algorithm>

namespace bertc::cuda {

namespace attention {
namespace {

constexpr int kWarpSize = 32;
/// Rows of a row kernel's block, a warp each.
constexpr int kRowsPerRowBlock = 4;
constexpr int kRowThreads = kRowsPerRowBlock * kWarpSize;

/// Row `row` of a chunk's score block: query i of sequence b for head h (the chunk's head
/// row / (batch * seq), counted from firstHead).
struct BlockRow {
  int64_t b, h, i;
};

__device__ BlockRow blockRow(const Params &p, int64_t firstHead, int64_t row) {
  return {(row / p.seq) % p.batch, firstHead + row / (p.batch * p.seq), row % p.seq};
}

/// Keys a lane of a row kernel takes at a time, and keys a sweep of the warp covers.
constexpr int kLaneKeys = kDropoutGroupSize;
constexpr int kSweepKeys = kWarpSize * kLaneKeys;

/// The keys of a lane's sweep that the row has, from its first key `first`: kLaneKeys, fewer
/// at the row's end, 0 past it.
__device__ int laneKeys(const Params &p, int64_t first) {
  return first < p.seq ? int(p.seq - first < kLaneKeys ? p.seq - first : kLaneKeys) : 0;
}

/// The masked, scaled score of key j from its raw q·k in a row of sequence b.
__device__ float keyScore(const float *raw, const int32_t *mask, const Params &p, int64_t b,
                          int64_t j) {
  return maskedScore(raw[j], p.scale, keyMaskBias(mask, p, b, j));
}

/// The masked, scaled scores of keys first .. first + count - 1 of a row of sequence b,
/// -inf past them: the raw values and the mask words a load each where they are aligned.
/// The backward reads its scores so; the forward reads them a key at a time (keyScore),
/// which an H200 ran faster (0.61 against 0.72 ms for BERT-base's forward at seq 512).
__device__ void laneScores(const float *raw, const int32_t *mask, const Params &p, int64_t b,
                           int64_t first, int count, float (&score)[kLaneKeys]) {
  float dot[kLaneKeys];
  int32_t words[kLaneKeys];
  loadFloats(raw + first, count, dot);
  loadValues(mask + b * p.seq + first, count, words);
#pragma unroll // constant indices keep the arrays in registers
  for (int k = 0; k < kLaneKeys; ++k)
    score[k] = k < count ? maskedScore(dot[k], p.scale, maskBias(words[k])) : -INFINITY;
}

/// Forward: a row of raw scores becomes T(P*Z) in place, and lse its log-sum-exp.
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    forwardRowKernel(float *scores, const int32_t *mask, float *lse, int64_t firstHead,
                     int64_t rows, Params p) {
  const int64_t row = int64_t(blockIdx.x) * kRowsPerRowBlock + threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  if (row >= rows) // the whole warp
    return;
  const BlockRow at = blockRow(p, firstHead, row);
  float *raw = scores + row * p.seq;
  const int64_t laneFirst = int64_t(lane) * kLaneKeys;
  // Each lane's maximum and sum of exp over its keys in one pass (the sum rescaled when the
  // maximum grows), then the warp's.
  float laneMax = -INFINITY, laneSum = 0.0f;
  for (int64_t first = laneFirst; first < p.seq; first += kSweepKeys) {
    const int count = laneKeys(p, first);
    float score[kLaneKeys];
    float sweepMax = -INFINITY;
#pragma unroll // constant indices keep `score` in registers
    for (int k = 0; k < kLaneKeys; ++k) {
      score[k] = k < count ? keyScore(raw, mask, p, at.b, first + k) : -INFINITY;
      sweepMax = fmaxf(sweepMax, score[k]);
    }
    const float newMax = fmaxf(laneMax, sweepMax);
    laneSum *= expf(laneMax - newMax); // 0 while laneMax is -inf
#pragma unroll
    for (int k = 0; k < kLaneKeys; ++k)
      laneSum += k < count ? expf(score[k] - newMax) : 0.0f;
    laneMax = newMax;
  }
  const float rowMax = warpMax(laneMax);
  const float sum = laneMax > -INFINITY ? laneSum * expf(laneMax - rowMax) : 0.0f;
  // The fused forward's lse: -FLT_MAX for a row with every key masked.
  const float rowLse = rowMax + logf(warpSum(sum));
  if (lane == 0)
    lse[p.statIndex(at.b, at.h, at.i)] = rowLse;

  T *packed = reinterpret_cast<T *>(raw);
  for (int64_t sweep = 0; sweep < p.seq; sweep += kSweepKeys) {
    const int64_t first = sweep + laneFirst;
    const int count = laneKeys(p, first);
    const uint32_t kept = keepBits<1>(p, at.b, p.dropoutIndex(at.h, at.i, first), count, 0);
    float keptProb[kLaneKeys];
#pragma unroll
    for (int k = 0; k < kLaneKeys; ++k)
      keptProb[k] =
          k < count ? probabilityFromLse(keyScore(raw, mask, p, at.b, first + k), rowLse, p.seq) *
                          dropoutFactor(p, kept, k)
                    : 0.0f;
    __syncwarp(); // the sweep's fp32 values are read before T values overwrite them
#pragma unroll
    for (int k = 0; k < kLaneKeys; ++k)
      if (k < count)
        storeFloat(packed + first + k, keptProb[k]);
  }
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
  float *raw = scores + row * p.seq, *rawGrad = probGrads + row * p.seq;
  T *packed = reinterpret_cast<T *>(raw), *packedGrad = reinterpret_cast<T *>(rawGrad);
  for (int64_t sweep = 0; sweep < p.seq; sweep += kSweepKeys) {
    const int64_t first = sweep + int64_t(lane) * kLaneKeys;
    const int count = laneKeys(p, first);
    const uint32_t kept = keepBits<1>(p, at.b, p.dropoutIndex(at.h, at.i, first), count, 0);
    float keptProb[kLaneKeys], scoreGrad[kLaneKeys];
    laneScores(raw, mask, p, at.b, first, count, keptProb);
    loadFloats(rawGrad + first, count, scoreGrad);
#pragma unroll // constant indices keep both in registers
    for (int k = 0; k < kLaneKeys; ++k) {
      const float prob = k < count ? probabilityFromLse(keptProb[k], rowLse, p.seq) : 0.0f;
      const float factor = dropoutFactor(p, kept, k);
      keptProb[k] = prob * factor;
      scoreGrad[k] = prob * (scoreGrad[k] * factor - term) * p.scale;
    }
    __syncwarp(); // the sweep's fp32 values are read before T values overwrite them
    storeRoundedFloats(packed + first, count, keptProb);
    storeRoundedFloats(packedGrad + first, count, scoreGrad);
  }
}

/// The fused kernels' checks and parameters (no row term: the backward's row kernel sums
/// it), and the chunk size's range.
Params chunkedParams(int64_t headChunk, int64_t batch, int64_t seq, int64_t hidden, int64_t heads,
                     float dropoutRate, const DropoutKey &key, const float *lse) {
  const Params p = makeParams(batch, seq, hidden, heads, dropoutRate, key, lse, nullptr);
  if (headChunk < 1 || headChunk > heads)
    throw std::invalid_argument("attention: head_chunk " + std::to_string(headChunk) +
                                " is not between 1 and the " + std::to_string(heads) + " heads");
  return p;
}

/// Heads firstHead, firstHead + 1, ... of a [batch, seq, hidden] tensor: per head (a
/// group), `batch` [seq, headDim] matrices.
template <typename T>
BatchedOperand<T> headOperand(const T *x, const Params &p, int64_t firstHead, bool transposed) {
  return {x + firstHead * p.headDim, p.hidden, p.seq * p.hidden, transposed, p.headDim};
}
template <typename T> BatchedOutput<T> headOutput(T *x, const Params &p, int64_t firstHead) {
  return {x + firstHead * p.headDim, p.hidden, p.seq * p.hidden, p.headDim};
}

/// A score block: per head of the chunk, `batch` fp32 [seq, seq] matrices ...
BatchedOutput<float> blockOutput(float *block, const Params &p) {
  return {block, p.seq, p.seq * p.seq, p.batch * p.seq * p.seq};
}
/// ... and the same after a row kernel rewrote their rows as T.
template <typename T>
BatchedOperand<T> packedOperand(const float *block, const Params &p, bool transposed) {
  const int64_t ld = attentionPackedLd<T>(p.seq);
  return {reinterpret_cast<const T *>(block), ld, ld * p.seq, transposed, ld * p.seq * p.batch};
}

unsigned rowBlocks(int64_t rows) {
  return unsigned((rows + kRowsPerRowBlock - 1) / kRowsPerRowBlock);
}

} // namespace
} // namespace attention

template <typename T>
void chunkedAttentionForward(LinearGemms &gemms, const T *q, const T *k, const T *v,
                             const int32_t *mask, T *ctx, float *lse, float *workspace,
                             int64_t headChunk, int64_t batch, int64_t seq, int64_t hidden,
                             int64_t heads, float dropoutRate, const DropoutKey &key,
                             GemmMath math) {
  using namespace attention;
  const Params p = chunkedParams(headChunk, batch, seq, hidden, heads, dropoutRate, key, nullptr);
  if (batch == 0 || seq == 0)
    return;
  const int64_t d = p.headDim;
  for (int64_t firstHead = 0; firstHead < heads; firstHead += headChunk) {
    const int64_t chunkHeads = std::min(headChunk, heads - firstHead);
    const int scores = gemms.listBatchedGemms<T, float>(
        {{headOperand(q, p, firstHead, false), headOperand(k, p, firstHead, true),
          blockOutput(workspace, p)}},
        seq, seq, d, batch, chunkHeads, math);
    const int context = gemms.listBatchedGemms<T, T>(
        {{packedOperand<T>(workspace, p, false), headOperand(v, p, firstHead, false),
          headOutput(ctx, p, firstHead)}},
        seq, d, seq, batch, chunkHeads, math);
    gemms.fillListed();
    gemms.runListed(scores);
    const int64_t rows = chunkHeads * batch * seq;
    BERTC_LAUNCH((forwardRowKernel<T>), rowBlocks(rows), kRowThreads, 0, gemms.stream(), workspace,
                 mask, lse, firstHead, rows, p);
    gemms.runListed(context);
  }
}

template <typename T>
void chunkedAttentionBackward(LinearGemms &gemms, const T *dctx, const T *q, const T *k, const T *v,
                              const int32_t *mask, const T *ctx, const float *lse, float *workspace,
                              T *dq, T *dk, T *dv, int64_t headChunk, int64_t batch, int64_t seq,
                              int64_t hidden, int64_t heads, float dropoutRate,
                              const DropoutKey &key, GemmMath math) {
  using namespace attention;
  const Params p = chunkedParams(headChunk, batch, seq, hidden, heads, dropoutRate, key, lse);
  if (batch == 0 || seq == 0)
    return;
  // The workspace: the score block that becomes P*Z, then the one that becomes dS.
  float *probs = workspace;
  float *probGrads = probs + attentionScoreBlockFloats(headChunk, batch, seq);
  const int64_t d = p.headDim;
  for (int64_t firstHead = 0; firstHead < heads; firstHead += headChunk) {
    const int64_t chunkHeads = std::min(headChunk, heads - firstHead);
    const auto head = [&](const T *x, bool transposed) {
      return headOperand(x, p, firstHead, transposed);
    };
    // Q K^T and dctx V^T, then dV = P^T dctx and dK = dS^T Q, share their layouts: a call
    // each; dQ = dS K another.
    const int scores = gemms.listBatchedGemms<T, float>(
        {{head(q, false), head(k, true), blockOutput(probs, p)},
         {head(dctx, false), head(v, true), blockOutput(probGrads, p)}},
        seq, seq, d, batch, chunkHeads, math);
    const int valueAndKey = gemms.listBatchedGemms<T, T>(
        {{packedOperand<T>(probs, p, true), head(dctx, false), headOutput(dv, p, firstHead)},
         {packedOperand<T>(probGrads, p, true), head(q, false), headOutput(dk, p, firstHead)}},
        seq, d, seq, batch, chunkHeads, math);
    const int query = gemms.listBatchedGemms<T, T>(
        {{packedOperand<T>(probGrads, p, false), head(k, false), headOutput(dq, p, firstHead)}},
        seq, d, seq, batch, chunkHeads, math);
    gemms.fillListed();
    gemms.runListed(scores);
    const int64_t rows = chunkHeads * batch * seq;
    BERTC_LAUNCH((backwardRowKernel<T>), rowBlocks(rows), kRowThreads, 0, gemms.stream(), probs,
                 probGrads, dctx, ctx, mask, firstHead, rows, p);
    gemms.runListed(valueAndKey);
    gemms.runListed(query);
  }
}

#define INSTANTIATE(T)                                                                             \
  template void chunkedAttentionForward(                                                           \
      LinearGemms &, const T *, const T *, const T *, const int32_t *, T *, float *, float *,      \
      int64_t, int64_t, int64_t, int64_t, int64_t, float, const DropoutKey &, GemmMath);           \
  template void chunkedAttentionBackward(LinearGemms &, const T *, const T *, const T *,           \
                                         const T *, const int32_t *, const T *, const float *,     \
                                         float *, T *, T *, T *, int64_t, int64_t, int64_t,        \
                                         int64_t, int64_t, float, const DropoutKey &, GemmMath);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
