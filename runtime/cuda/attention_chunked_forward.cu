// The tensor-core attention's forward (attention_chunked.cuh): per chunk of heads, the
// scores q k^T as one batched GEMM, the row kernel (softmax, lse, dropout, P*Z rounded to T
// in place), then ctx = (P*Z) v.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_chunked_attention.h"

#include "attention_chunked.cuh"
#include "launch.cuh"
#include "warp_reduce.cuh"

#include <algorithm>

namespace bertc::cuda {

namespace attention {
namespace {

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
  const int32_t word = documentWord(mask, p, at.b, at.i);
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
      score[k] = k < count ? keyScore(raw, mask, p, at, word, first + k) : -INFINITY;
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
      keptProb[k] = k < count ? probabilityFromLse(keyScore(raw, mask, p, at, word, first + k),
                                                   rowLse, p.reach(at.i)) *
                                    dropoutFactor(p, kept, k)
                              : 0.0f;
    __syncwarp(); // the sweep's fp32 values are read before T values overwrite them
#pragma unroll
    for (int k = 0; k < kLaneKeys; ++k)
      if (k < count)
        storeFloat(packed + first + k, keptProb[k]);
  }
}

} // namespace
} // namespace attention

template <typename T>
void chunkedAttentionForward(LinearGemms &gemms, const T *q, const T *k, const T *v,
                             const int32_t *mask, T *ctx, float *lse, float *workspace,
                             int64_t headChunk, int64_t batch, int64_t seq, int64_t hidden,
                             AttentionHeads heads, float dropoutRate, const DropoutKey &key,
                             GemmMath math) {
  using namespace attention;
  const Params p = chunkedParams(headChunk, batch, seq, hidden, heads, dropoutRate, key, nullptr);
  if (batch == 0 || seq == 0)
    return;
  const int64_t d = p.headDim;
  for (int64_t firstHead = 0; firstHead < p.heads; firstHead += headChunk) {
    const int64_t chunkHeads = std::min(headChunk, p.heads - firstHead);
    const int scores = gemms.listBatchedGemms<T, float>(
        {{headOperand(q, p, firstHead, false), keyHeadOperand(k, p, firstHead, true),
          blockOutput(workspace, p)}},
        seq, seq, d, batch, chunkHeads, math);
    const int context = gemms.listBatchedGemms<T, T>(
        {{packedOperand<T>(workspace, p, false), keyHeadOperand(v, p, firstHead, false),
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

#define INSTANTIATE(T)                                                                             \
  template void chunkedAttentionForward(                                                           \
      LinearGemms &, const T *, const T *, const T *, const int32_t *, T *, float *, float *,      \
      int64_t, int64_t, int64_t, int64_t, AttentionHeads, float, const DropoutKey &, GemmMath);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
