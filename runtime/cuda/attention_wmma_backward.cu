// The fused attention backward of 16-bit storage on tensor cores below sm_80, fp16 on sm_70
// and sm_75 (attention_mma_backward.cu's runs from sm_80; attention_wmma.cuh): the
// gradients of attention_backward.cu's kernels, after its row term r_i = dctx_i · ctx_i,
// with every product a warp matrix product. With P = exp(s - lse), z the dropout factors:
//   dv_j = sum_i P_ij z_ij dctx_i,   dP_ij = z_ij (dctx_i · v_j),
//   dS_ij = P_ij (dP_ij - r_i) / sqrt(d),   dq_i = sum_j dS_ij k_j,   dk_j = sum_i dS_ij q_i.
// Two kernels, as there: one owns keys (a warp holds 16 keys' k and v rows as fragments,
// streams the queries' q and dctx, and accumulates dk and dv) and one owns queries (q and
// dctx held, k and v streamed, dq accumulated), so no sum needs atomics and each runs in a
// fixed order. Both recompute the scores; the first draws the dropout mask and stores it as
// bits for the second. The products' 16-bit operands are the stored
// tensors and the probabilities and score gradients rounded to 16 bits, as in
// attention_chunked.cu; every sum is fp32.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "attention_wmma.cuh"
#include "launch.cuh"

namespace bertc::cuda::attention {

namespace {
using namespace wmma_tiles;

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    keyValueGradKernel(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                       T *dk, T *dv, Params p) {
  if constexpr (kCompiledForTensorCores<T>) {
    using W = typename Wmma<T>::Type;
    // The block's keys, then its values, then each tile's queries and output gradients.
    __shared__ __align__(32) W rows[kBlockRows * kTileStride<D>];
    __shared__ __align__(32) float scores[kWarps * kWarpRows * kScoreStride];
    __shared__ __align__(32) float probGrads[kWarps * kWarpRows * kScoreStride];
    __shared__ __align__(32) W probs[kWarps * kWarpRows * kProbStride];
    __shared__ __align__(32) W scoreGrads[kWarps * kWarpRows * kProbStride];
    __shared__ float tileLse[kStreamRows], tileRowTerm[kStreamRows];
    __shared__ uint8_t keep[kStreamRows][kBlockRows];
    W *queries = rows, *outputGrads = rows + kStreamRows * kTileStride<D>;
    const int64_t b = blockIdx.z, h = blockIdx.y;
    const int warp = threadIdx.x / 32;
    const int64_t firstKey = int64_t(blockIdx.x) * kBlockRows;
    const int64_t warpFirstKey = firstKey + warp * kWarpRows;
    const int warpOffset = warp * kWarpRows;
    const LaneCells cells;
    const int64_t j = warpFirstKey + cells.row;
    const float bias = j < p.seq ? keyMaskBias(mask, p, b, j) : 0.0f;

    RowsA<W> key[D / 16], value[D / 16];
    loadOwnRows<D>(k, p, b, h, firstKey, rows, key);
    loadOwnRows<D>(v, p, b, h, firstKey, rows, value);

    Accumulator keyGrad[D / 16], valueGrad[D / 16];
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      wmma::fill_fragment(keyGrad[n], 0.0f);
      wmma::fill_fragment(valueGrad[n], 0.0f);
    }
    for (int64_t first = 0; first < p.seq; first += kStreamRows) {
      __syncthreads(); // the previous tile is consumed
      loadRows<D>(q, p, b, h, first, kStreamRows, queries);
      loadRows<D>(dctx, p, b, h, first, kStreamRows, outputGrads);
      if (threadIdx.x < kStreamRows && first + threadIdx.x < p.seq) {
        const int64_t stat = p.statIndex(b, h, first + threadIdx.x);
        tileLse[threadIdx.x] = p.lse[stat];
        tileRowTerm[threadIdx.x] = p.rowTerm[stat];
      }
      if (p.dropoutRate > 0.0f)
        fillKeepTile<kBlockRows>(p, b, h, first, firstKey, keep);
      __syncthreads();
      if (p.dropoutRate > 0.0f)
        storeKeepWords<kBlockRows>(p, b, h, first, firstKey, keep);
      // The scores and dP transposed: the warp's keys against the tile's queries.
      Accumulator s[kStreamRows / 16], dp[kStreamRows / 16];
      productWithRows<D>(key, queries, s);
      productWithRows<D>(value, outputGrads, dp);
      float *warpScores = scores + warpOffset * kScoreStride;
      float *warpProbGrads = probGrads + warpOffset * kScoreStride;
      stageScores(s, warpScores);
      stageScores(dp, warpProbGrads);
      const int count = p.seq - first < kStreamRows ? int(p.seq - first) : kStreamRows;
      W *warpProbs = probs + warpOffset * kProbStride;
      W *warpScoreGrads = scoreGrads + warpOffset * kProbStride;
      for (int c = 0; c < kStreamRows / 2; ++c) {
        const int ii = cells.firstColumn + c, cell = cells.row * kScoreStride + ii;
        float weighted = 0.0f, scoreGrad = 0.0f;
        if (ii < count && j < p.seq) {
          const float prob =
              probabilityFromLse(maskedScore(warpScores[cell], p.scale, bias), tileLse[ii], p.seq);
          const float factor =
              p.dropoutRate > 0.0f ? (keep[ii][warpOffset + cells.row] ? p.keptScale : 0.0f) : 1.0f;
          weighted = prob * factor;
          scoreGrad = prob * (warpProbGrads[cell] * factor - tileRowTerm[ii]) * p.scale;
        }
        storeWmma(warpProbs + cells.row * kProbStride + ii, weighted);
        storeWmma(warpScoreGrads + cells.row * kProbStride + ii, scoreGrad);
      }
      __syncwarp();
      accumulateProduct<D>(warpProbs, outputGrads, valueGrad);
      accumulateProduct<D>(warpScoreGrads, queries, keyGrad);
    }
    float *staging = scores + warpOffset * kScoreStride;
    storeRows<D>(keyGrad, staging, dk, p, b, h, warpFirstKey);
    storeRows<D>(valueGrad, staging, dv, p, b, h, warpFirstKey);
  }
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    queryGradKernel(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask, T *dq,
                    Params p) {
  if constexpr (kCompiledForTensorCores<T>) {
    using W = typename Wmma<T>::Type;
    // The block's queries, then its output gradients, then each tile's keys and values.
    __shared__ __align__(32) W rows[kBlockRows * kTileStride<D>];
    __shared__ __align__(32) float scores[kWarps * kWarpRows * kScoreStride];
    __shared__ __align__(32) float probGrads[kWarps * kWarpRows * kScoreStride];
    __shared__ __align__(32) W scoreGrads[kWarps * kWarpRows * kProbStride];
    __shared__ float keyBias[kStreamRows];
    W *keys = rows, *values = rows + kStreamRows * kTileStride<D>;
    const int64_t b = blockIdx.z, h = blockIdx.y;
    const int warp = threadIdx.x / 32;
    const int64_t firstQuery = int64_t(blockIdx.x) * kBlockRows;
    const int64_t warpFirstQuery = firstQuery + warp * kWarpRows;
    const int warpOffset = warp * kWarpRows;
    const LaneCells cells;
    const int64_t i = warpFirstQuery + cells.row;
    // A row that does not exist gets probabilities from lse 0 (its results are not stored).
    const int64_t stat = i < p.seq ? p.statIndex(b, h, i) : 0;
    const float rowLse = i < p.seq ? p.lse[stat] : 0.0f;
    const float rowTerm = i < p.seq ? p.rowTerm[stat] : 0.0f;

    RowsA<W> query[D / 16], outputGrad[D / 16];
    loadOwnRows<D>(q, p, b, h, firstQuery, rows, query);
    loadOwnRows<D>(dctx, p, b, h, firstQuery, rows, outputGrad);

    Accumulator queryGrad[D / 16];
#pragma unroll
    for (int n = 0; n < D / 16; ++n)
      wmma::fill_fragment(queryGrad[n], 0.0f);
    for (int64_t first = 0; first < p.seq; first += kStreamRows) {
      __syncthreads(); // the previous tile is consumed
      loadRows<D>(k, p, b, h, first, kStreamRows, keys);
      loadRows<D>(v, p, b, h, first, kStreamRows, values);
      loadKeyBias(mask, p, b, first, keyBias);
      __syncthreads();
      Accumulator s[kStreamRows / 16], dp[kStreamRows / 16];
      productWithRows<D>(query, keys, s);
      productWithRows<D>(outputGrad, values, dp);
      float *warpScores = scores + warpOffset * kScoreStride;
      float *warpProbGrads = probGrads + warpOffset * kScoreStride;
      stageScores(s, warpScores);
      stageScores(dp, warpProbGrads);
      const int count = p.seq - first < kStreamRows ? int(p.seq - first) : kStreamRows;
      const uint32_t kept = storedKeepBits(p, b, h, i, first);
      W *warpScoreGrads = scoreGrads + warpOffset * kProbStride;
      for (int c = 0; c < kStreamRows / 2; ++c) {
        const int jj = cells.firstColumn + c, cell = cells.row * kScoreStride + jj;
        float scoreGrad = 0.0f;
        if (jj < count) {
          const float prob = probabilityFromLse(maskedScore(warpScores[cell], p.scale, keyBias[jj]),
                                                rowLse, p.seq);
          const float factor = dropoutFactor(p, kept, jj);
          scoreGrad = prob * (warpProbGrads[cell] * factor - rowTerm) * p.scale;
        }
        storeWmma(warpScoreGrads + cells.row * kProbStride + jj, scoreGrad);
      }
      __syncwarp();
      accumulateProduct<D>(warpScoreGrads, keys, queryGrad);
    }
    storeRows<D>(queryGrad, scores + warpOffset * kScoreStride, dq, p, b, h, warpFirstQuery);
  }
}
} // namespace

template <typename T>
void tensorCoreBackward(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                        T *dq, T *dk, T *dv, const Params &p, cudaStream_t stream) {
  dispatchHeadDim(p.headDim, [&](auto headDim) {
    constexpr int D = decltype(headDim)::value;
    if constexpr (D <= kMaxTensorCoreAttentionHeadDim) {
      BERTC_LAUNCH((keyValueGradKernel<T, D>), blockGrid(p), kThreads, 0, stream, dctx, q, k, v,
                   mask, dk, dv, p);
      BERTC_LAUNCH((queryGradKernel<T, D>), blockGrid(p), kThreads, 0, stream, dctx, q, k, v, mask,
                   dq, p);
    }
  });
}

#define INSTANTIATE(T)                                                                             \
  template void tensorCoreBackward(const T *, const T *, const T *, const T *, const int32_t *,    \
                                   T *, T *, T *, const Params &, cudaStream_t);
INSTANTIATE(::bertc::bf16)
INSTANTIATE(::bertc::fp16)
#undef INSTANTIATE

} // namespace bertc::cuda::attention
