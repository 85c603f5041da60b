// The fused attention forward of 16-bit storage on tensor cores below sm_80, fp16 on sm_70
// and sm_75 (attention_mma_forward.cu's one pass runs from sm_80; attention_wmma.cuh): the
// same result as attention_forward.cu's kernel, ctx = dropout(softmax(q k^T / sqrt(d) +
// maskBias)) v per head, with q k^T and P v as warp matrix products and nothing of size
// [seq, seq] in memory. A warp owns 16 queries and streams the keys in two passes:
//   1. the scores of each key tile (16-bit q and k, fp32 sums), each row's running maximum
//      and sum of exp, and at the end its log-sum-exp lse = max + log sum (kept for the
//      backward);
//   2. the scores again, p = exp(s - lse) as the backward recomputes it, times the dropout
//      factor, rounded to 16 bits, and ctx += p v.
// The second pass's probabilities are final, so no accumulator is ever rescaled (a
// fragment's layout is unspecified, so rescaling its rows would cost a trip through shared
// memory per tile); the price is q k^T twice. Keys past seq score -inf; masked keys
// -FLT_MAX as on the CPU (so a row with every key masked averages all of them).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "attention_wmma.cuh"
#include "launch.cuh"

namespace bertc::cuda::attention {

namespace {
using namespace wmma_tiles;

/// The log-sum-exp of a row from the (maximum, sum of exp) of its two lanes' halves; a half
/// with only keys past seq has maximum -inf and adds nothing.
__device__ __forceinline__ float combineHalves(float rowMax, float rowSum) {
  const float otherMax = __shfl_xor_sync(0xffffffffu, rowMax, 1);
  const float otherSum = __shfl_xor_sync(0xffffffffu, rowSum, 1);
  const float top = fmaxf(rowMax, otherMax);
  const float sum = (rowMax > -INFINITY ? rowSum * expf(rowMax - top) : 0.0f) +
                    (otherMax > -INFINITY ? otherSum * expf(otherMax - top) : 0.0f);
  return top + logf(sum);
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    forwardKernel(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                  Params p) {
  if constexpr (kCompiledForTensorCores<T>) {
    using W = typename Wmma<T>::Type;
    // The block's queries, then each tile's keys and values.
    __shared__ __align__(32) W rows[kBlockRows * kTileStride<D>];
    __shared__ __align__(32) float scores[kWarps * kWarpRows * kScoreStride];
    __shared__ __align__(32) W probs[kWarps * kWarpRows * kProbStride];
    __shared__ float keyBias[kStreamRows];
    W *keys = rows, *values = rows + kStreamRows * kTileStride<D>;
    const int64_t b = blockIdx.z, h = blockIdx.y;
    const int warp = threadIdx.x / 32;
    const int64_t firstQuery = int64_t(blockIdx.x) * kBlockRows + warp * kWarpRows;
    float *warpScores = scores + warp * kWarpRows * kScoreStride;
    W *warpProbs = probs + warp * kWarpRows * kProbStride;
    const LaneCells cells;
    const int64_t i = firstQuery + cells.row;

    RowsA<W> query[D / 16];
    loadOwnRows<D>(q, p, b, h, int64_t(blockIdx.x) * kBlockRows, rows, query);

    float rowMax = -INFINITY, rowSum = 0.0f;
    for (int64_t first = 0; first < p.seq; first += kStreamRows) {
      __syncthreads(); // the previous tile is consumed
      loadRows<D>(k, p, b, h, first, kStreamRows, keys);
      loadKeyBias(mask, p, b, first, keyBias);
      __syncthreads();
      Accumulator s[kStreamRows / 16];
      productWithRows<D>(query, keys, s);
      stageScores(s, warpScores);
      float score[kStreamRows / 2];
      float tileMax = -INFINITY;
#pragma unroll
      for (int c = 0; c < kStreamRows / 2; ++c) {
        const int jj = cells.firstColumn + c;
        score[c] = maskedScore(warpScores[cells.row * kScoreStride + jj], p.scale, keyBias[jj]);
        tileMax = fmaxf(tileMax, score[c]);
      }
      if (tileMax > -INFINITY) {
        const float newMax = fmaxf(rowMax, tileMax);
        rowSum *= expf(rowMax - newMax);
#pragma unroll
        for (int c = 0; c < kStreamRows / 2; ++c)
          rowSum += expf(score[c] - newMax);
        rowMax = newMax;
      }
    }
    const float rowLse = combineHalves(rowMax, rowSum);
    if (cells.half == 0 && i < p.seq)
      lse[p.statIndex(b, h, i)] = rowLse;

    Accumulator out[D / 16];
#pragma unroll
    for (int n = 0; n < D / 16; ++n)
      wmma::fill_fragment(out[n], 0.0f);
    for (int64_t first = 0; first < p.seq; first += kStreamRows) {
      __syncthreads(); // the previous tile is consumed
      loadRows<D>(k, p, b, h, first, kStreamRows, keys);
      loadRows<D>(v, p, b, h, first, kStreamRows, values);
      loadKeyBias(mask, p, b, first, keyBias);
      __syncthreads();
      Accumulator s[kStreamRows / 16];
      productWithRows<D>(query, keys, s);
      stageScores(s, warpScores);
      const int count = p.seq - first < kStreamRows ? int(p.seq - first) : kStreamRows;
      const uint32_t kept = keepBits<2>(p, b, p.dropoutIndex(h, i, first), count, cells.half);
      for (int c = 0; c < kStreamRows / 2; ++c) {
        const int jj = cells.firstColumn + c;
        const float score =
            maskedScore(warpScores[cells.row * kScoreStride + jj], p.scale, keyBias[jj]);
        const float prob = jj < count ? probabilityFromLse(score, rowLse, p.seq) : 0.0f;
        storeWmma(warpProbs + cells.row * kProbStride + jj, prob * dropoutFactor(p, kept, jj));
      }
      __syncwarp();
      accumulateProduct<D>(warpProbs, values, out);
    }
    storeRows<D>(out, warpScores, ctx, p, b, h, firstQuery);
  }
}
} // namespace

} // namespace bertc::cuda::attention

namespace bertc::cuda {

template <typename T> bool attentionOnTensorCores(int64_t headDim) {
  if constexpr (std::is_same_v<T, float>) {
    return false;
  } else {
    if (headDim > kMaxTensorCoreAttentionHeadDim)
      return false;
    return attention::deviceArch() >= attention::wmma_tiles::Wmma<T>::kMinArch;
  }
}

template bool attentionOnTensorCores<float>(int64_t);
template bool attentionOnTensorCores<bf16>(int64_t);
template bool attentionOnTensorCores<fp16>(int64_t);

} // namespace bertc::cuda

namespace bertc::cuda::attention {

int deviceArch() {
  int device = 0, major = 0, minor = 0;
  BERTC_CUDA_CHECK(cudaGetDevice(&device));
  BERTC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  BERTC_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 100 + minor * 10;
}

template <typename T>
void tensorCoreForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                       const Params &p, cudaStream_t stream) {
  dispatchHeadDim(p.headDim, [&](auto headDim) {
    constexpr int D = decltype(headDim)::value;
    if constexpr (D <= kMaxTensorCoreAttentionHeadDim)
      BERTC_LAUNCH((forwardKernel<T, D>), blockGrid(p), kThreads, 0, stream, q, k, v, mask, ctx,
                   lse, p);
  });
}

#define INSTANTIATE(T)                                                                             \
  template void tensorCoreForward(const T *, const T *, const T *, const int32_t *, T *, float *,  \
                                  const Params &, cudaStream_t);
INSTANTIATE(::bertc::bf16)
INSTANTIATE(::bertc::fp16)
#undef INSTANTIATE

} // namespace bertc::cuda::attention
