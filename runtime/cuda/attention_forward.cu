// The fused attention forward: ctx = dropout(softmax(q k^T / sqrt(d) + maskBias)) v per head,
// without ever forming the [seq, seq] matrix (flash-attention style). A block owns
// kRowsPerBlock queries of one (head, sequence); per query (its lanes, attention_common.cuh):
//   1. per tile of kTile keys (k and v tiles of the query head's key/value head in shared
//      memory): the tile's scores, their maximum, and the running maximum m;
//   2. rescale the running sum l and the running output acc by exp(m_old - m_new) (online
//      softmax), then for each key: p = exp(s - m), l += p, acc += dropout(p) v;
//   3. ctx = acc / l. lse = m + log l is saved for the backward, which recomputes p from it.
// Dropout multiplies the unnormalised p, which equals dropping the normalised probability
// since the mask factor and 1 / l commute. Keys past seq score -inf; masked keys
// -FLT_MAX as on the CPU (so a row with every key masked averages all of them). With causal,
// the block stops at the tile of its last query, and a query's later keys score -inf too.
// 16-bit storage runs attention_mma_forward.cu's tensor-core kernel instead where the GPU
// and the head dimension allow (attentionOnTensorCores).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "attention_common.cuh"
#include "attention_mma.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace attention {
namespace {
template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    forwardKernel(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                  Params p) {
  using Layout = HeadLayout<D>;
  __shared__ __align__(16) float keys[kTile * Layout::kRowFloats];
  __shared__ __align__(16) float values[kTile * Layout::kRowFloats];
  __shared__ float keyBias[kTile];
  __shared__ int32_t keyWords[kTile];
  const int64_t b = blockIdx.z, h = blockIdx.y, kvHead = h / p.group();
  const int part = threadIdx.x % Layout::kLanesPerRow;
  const int64_t firstQuery = int64_t(blockIdx.x) * Layout::kRowsPerBlock;
  const int64_t i = firstQuery + threadIdx.x / Layout::kLanesPerRow;
  const bool exists = i < p.seq;
  const int32_t word = documentWord(mask, p, b, i);

  float query[kDimsPerThread], acc[kDimsPerThread] = {};
  loadSlice(p.queryRows(q, b, h), p, i, part, exists, query);
  float runningMax = -INFINITY, runningSum = 0.0f;
  const int64_t keyEnd = p.keyEnd(firstQuery + Layout::kRowsPerBlock);
  for (int64_t first = 0; first < keyEnd; first += kTile) {
    __syncthreads(); // the previous tile is consumed
    loadTile<D>(p.keyRows(k, b, kvHead), p, first, keys);
    loadTile<D>(p.keyRows(v, b, kvHead), p, first, values);
    loadKeyBias<kTile>(mask, p, b, first, keyBias, keyWords);
    __syncthreads();

    float scores[kTile];
    float tileMax = -INFINITY;
#pragma unroll
    for (int jj = 0; jj < kTile; ++jj) {
      scores[jj] = maskedScore(rowSum<D>(dotSlice(query, tileSlice<D>(keys, jj, part))), p.scale,
                               visibleBias(p, keyBias[jj], keyWords[jj], word, i, first + jj));
      tileMax = fmaxf(tileMax, scores[jj]);
    }
    // The first tile always holds a real key that every query reaches (key 0), so newMax is
    // finite and exp(-inf) = 0 clears nothing that matters.
    const float newMax = fmaxf(runningMax, tileMax);
    const float correction = expf(runningMax - newMax);
    runningSum *= correction;
#pragma unroll
    for (int c = 0; c < kDimsPerThread; ++c)
      acc[c] *= correction;
    const uint32_t kept =
        keepBits<Layout::kLanesPerRow>(p, b, p.dropoutIndex(h, i, first), kTile, part);
#pragma unroll
    for (int jj = 0; jj < kTile; ++jj) {
      const float prob = expf(scores[jj] - newMax);
      runningSum += prob;
      axpySlice(acc, prob * dropoutFactor(p, kept, jj), tileSlice<D>(values, jj, part));
    }
    runningMax = newMax;
  }
  if (!exists)
    return;
  const float inverseSum = 1.0f / runningSum;
  storeSlice(p.queryRows(ctx, b, h), p, i, part, acc, inverseSum);
  if (part == 0)
    lse[p.statIndex(b, h, i)] = runningMax + logf(runningSum);
}
} // namespace
} // namespace attention

template <typename T>
void attentionForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                      int64_t batch, int64_t seq, int64_t hidden, AttentionHeads heads,
                      float dropoutRate, const DropoutKey &key, cudaStream_t stream) {
  using namespace attention;
  const Params p = makeParams(batch, seq, hidden, heads, dropoutRate, key, nullptr, nullptr);
  if (batch == 0 || seq == 0)
    return;
  if constexpr (!std::is_same_v<T, float>)
    if (attentionOnTensorCores<T>(p.headDim))
      return mmaForward(q, k, v, mask, ctx, lse, p, stream);
  dispatchHeadDim(p.headDim, [&](auto headDim) {
    constexpr int D = decltype(headDim)::value;
    BERTC_LAUNCH((forwardKernel<T, D>), rowGrid<D>(p, p.heads), kThreads, 0, stream, q, k, v, mask,
                 ctx, lse, p);
  });
}

#define INSTANTIATE(T)                                                                             \
  template void attentionForward(const T *, const T *, const T *, const int32_t *, T *, float *,   \
                                 int64_t, int64_t, int64_t, AttentionHeads, float,                 \
                                 const DropoutKey &, cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
