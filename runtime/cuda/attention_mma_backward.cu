// The fused attention backward of 16-bit storage from sm_80: the gradients of
// attention_backward.cu's kernels, after its row term r_i = dctx_i · ctx_i, with every
// product on mma.sync and every score in registers (attention_mma.cuh). With P = exp(s -
// lse), z the dropout factors:
//   dv_j = sum_i P_ij z_ij dctx_i,   dP_ij = z_ij (dctx_i · v_j),
//   dS_ij = P_ij (dP_ij - r_i) / sqrt(d),   dq_i = sum_j dS_ij k_j,   dk_j = sum_i dS_ij q_i.
// Two kernels, as there: one owns keys (a warp holds 16 keys' k and v rows as fragments,
// streams kQueryTile queries' q and dctx, and computes s and dP transposed, keys by
// queries, so that P z and dS are the matrix_a fragments of dv's and dk's products) and
// one owns queries (q and dctx held, k and v streamed kKeyTile at a time, dq
// accumulated), so no sum needs atomics and each runs in a fixed order. Both recompute
// the scores; the first draws the dropout mask (fillKeepTile: eight keys a Philox call) and
// stores it as bits for the second. The products' 16-bit operands are the stored tensors
// and P z and dS rounded to 16 bits, as in attention_chunked_backward.cu; every sum is fp32. A
// block of the first owns keys of one key/value head and streams the queries of each query head of
// its group, so its dk and dv are their sums. With causal, a key block starts at the query tile of
// its first key and a query block stops at the key tile of its last query.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "attention_mma.cuh"
#include "launch.cuh"

namespace bertc::cuda::attention {

namespace {
using namespace mma_tiles;

/// Queries a tile of the key kernel holds: a tile of fillKeepTile's.
constexpr int kQueryTile = kTile;
static_assert(2 * kQueryTile <= kBlockRows,
              "the block's own rows' tile has room for a query tile's q and dctx");

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    keyValueGradKernel(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                       T *dk, T *dv, Params p) {
  if constexpr (kCompiledForTensorCores<T>) {
    using W = typename MmaType<T>::Type;
    // The block's keys, then its values, then each tile's queries and output gradients.
    __shared__ __align__(16) W rows[kBlockRows * kTileStride<D>];
    __shared__ float tileLse[kQueryTile], tileRowTerm[kQueryTile];
    __shared__ uint8_t keep[kQueryTile][kBlockRows];
    __shared__ int32_t tileWords[kQueryTile];
    W *queries = rows, *outputGrads = rows + kQueryTile * kTileStride<D>;
    const int64_t b = blockIdx.z, kvHead = blockIdx.y;
    const int warpRow0 = int(threadIdx.x / 32) * kWarpRows;
    const int64_t firstKey = int64_t(blockIdx.x) * kBlockRows;
    const LaneRows lane(firstKey);
    float bias[2];
    int32_t words[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      bias[r] = lane.row[r] < p.seq ? keyMaskBias(mask, p, b, lane.row[r]) : 0.0f;
      words[r] = documentWord(mask, p, b, lane.row[r]);
    }

    uint32_t key[D / 16][4], value[D / 16][4];
    loadRows<D>(p.keyRows(k, b, kvHead), p, firstKey, kBlockRows, rows);
    __syncthreads();
    loadOperandRows<D>(rows, warpRow0, key);
    __syncthreads();
    loadRows<D>(p.keyRows(v, b, kvHead), p, firstKey, kBlockRows, rows);
    __syncthreads();
    loadOperandRows<D>(rows, warpRow0, value);

    float keyGrad[D / 8][4] = {}, valueGrad[D / 8][4] = {};
    for (int64_t h = kvHead * p.group(); h < (kvHead + 1) * p.group(); ++h)
      for (int64_t first = p.firstQueryTile(firstKey, kQueryTile); first < p.seq;
           first += kQueryTile) {
        __syncthreads(); // the previous tile (or the block's rows) is consumed
        loadRows<D>(p.queryRows(q, b, h), p, first, kQueryTile, queries);
        loadRows<D>(p.queryRows(dctx, b, h), p, first, kQueryTile, outputGrads);
        if (threadIdx.x < kQueryTile && first + threadIdx.x < p.seq) {
          const int64_t stat = p.statIndex(b, h, first + threadIdx.x);
          tileLse[threadIdx.x] = p.lse[stat];
          tileRowTerm[threadIdx.x] = p.rowTerm[stat];
          tileWords[threadIdx.x] = documentWord(mask, p, b, first + threadIdx.x);
        }
        if (p.dropoutRate > 0.0f)
          fillKeepTile<kBlockRows>(p, b, h, first, firstKey, keep);
        __syncthreads();
        if (p.dropoutRate > 0.0f)
          storeKeepWords<kBlockRows>(p, b, h, first, firstKey, keep);

        // s and dP transposed: the warp's keys (rows) against the tile's queries (columns).
        float s[kQueryTile / 8][4] = {}, dp[kQueryTile / 8][4] = {};
        productWithRows<D, kQueryTile>(key, queries, s);
        productWithRows<D, kQueryTile>(value, outputGrads, dp);
        const int count = p.seq - first < kQueryTile ? int(p.seq - first) : kQueryTile;
#pragma unroll
        for (int n = 0; n < kQueryTile / 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = e / 2, ii = laneColumn(n, e);
            float weighted = 0.0f, scoreGrad = 0.0f;
            if (ii < count && lane.row[r] < p.seq) {
              const int64_t i = first + ii;
              const float score =
                  maskedScore(s[n][e], p.scale,
                              visibleBias(p, bias[r], words[r], tileWords[ii], i, lane.row[r]));
              const float prob = probabilityFromLse(score, tileLse[ii], p.reach(i));
              const int blockKey = int(lane.row[r] - firstKey);
              const float factor =
                  p.dropoutRate > 0.0f ? (keep[ii][blockKey] ? p.keptScale : 0.0f) : 1.0f;
              weighted = prob * factor;
              scoreGrad = prob * (dp[n][e] * factor - tileRowTerm[ii]) * p.scale;
            }
            s[n][e] = weighted;
            dp[n][e] = scoreGrad;
          }
        accumulateProduct<D, kQueryTile>(s, outputGrads, valueGrad);
        accumulateProduct<D, kQueryTile>(dp, queries, keyGrad);
      }
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (lane.row[r] < p.seq) {
        storeRow<D>(keyGrad, r, 1.0f, p.keyRows(dk, b, kvHead), p, lane.row[r]);
        storeRow<D>(valueGrad, r, 1.0f, p.keyRows(dv, b, kvHead), p, lane.row[r]);
      }
  } else {
    stopWithoutTensorCores();
  }
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    queryGradKernel(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask, T *dq,
                    Params p) {
  if constexpr (kCompiledForTensorCores<T>) {
    using W = typename MmaType<T>::Type;
    // The block's queries and output gradients, then each tile's keys and values.
    __shared__ KeyTile<D, kKeyTile, W> tile;
    const int64_t b = blockIdx.z, h = blockIdx.y;
    const int warpRow0 = int(threadIdx.x / 32) * kWarpRows;
    const int64_t firstQuery = int64_t(blockIdx.x) * kBlockRows;
    const LaneRows lane(firstQuery);
    // A row that does not exist gets probabilities from lse 0 (its results are not stored).
    float rowLse[2], rowTerm[2];
    int32_t words[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const bool exists = lane.row[r] < p.seq;
      const int64_t stat = exists ? p.statIndex(b, h, lane.row[r]) : 0;
      rowLse[r] = exists ? p.lse[stat] : 0.0f;
      rowTerm[r] = exists ? p.rowTerm[stat] : 0.0f;
      words[r] = documentWord(mask, p, b, lane.row[r]);
    }

    uint32_t query[D / 16][4], outputGrad[D / 16][4];
    loadRows<D>(p.queryRows(q, b, h), p, firstQuery, kBlockRows, tile.keys);
    loadRows<D>(p.queryRows(dctx, b, h), p, firstQuery, kBlockRows, tile.values);
    __syncthreads();
    loadOperandRows<D>(tile.keys, warpRow0, query);
    loadOperandRows<D>(tile.values, warpRow0, outputGrad);

    float queryGrad[D / 8][4] = {};
    const int64_t keyEnd = p.keyEnd(firstQuery + kBlockRows);
    for (int64_t first = 0; first < keyEnd; first += kKeyTile) {
      __syncthreads(); // the previous tile (or the block's rows) is consumed
      tile.load(k, v, mask, p, b, h / p.group(), first);
      __syncthreads();

      float s[kKeyTile / 8][4] = {}, dp[kKeyTile / 8][4] = {};
      productWithRows<D, kKeyTile>(query, tile.keys, s);
      productWithRows<D, kKeyTile>(outputGrad, tile.values, dp);
      const int count = p.seq - first < kKeyTile ? int(p.seq - first) : kKeyTile;
      uint32_t kept[2][kKeyTile / 32];
#pragma unroll
      for (int w = 0; w < kKeyTile / 32; ++w)
#pragma unroll
        for (int r = 0; r < 2; ++r)
          kept[r][w] = 32 * w < count ? storedKeepBits(p, b, h, lane.row[r], first + 32 * w) : 0u;
#pragma unroll
      for (int n = 0; n < kKeyTile / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = e / 2, jj = laneColumn(n, e);
          float scoreGrad = 0.0f;
          if (jj < count) {
            const float bias =
                visibleBias(p, tile.bias[jj], tile.words[jj], words[r], lane.row[r], first + jj);
            const float prob = probabilityFromLse(maskedScore(s[n][e], p.scale, bias), rowLse[r],
                                                  p.reach(lane.row[r]));
            const float factor = dropoutFactor(p, kept[r][jj / 32], jj % 32);
            scoreGrad = prob * (dp[n][e] * factor - rowTerm[r]) * p.scale;
          }
          dp[n][e] = scoreGrad;
        }
      accumulateProduct<D, kKeyTile>(dp, tile.keys, queryGrad);
    }
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (lane.row[r] < p.seq)
        storeRow<D>(queryGrad, r, 1.0f, p.queryRows(dq, b, h), p, lane.row[r]);
  } else {
    stopWithoutTensorCores();
  }
}
} // namespace

template <typename T>
void mmaBackward(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask, T *dq,
                 T *dk, T *dv, const Params &p, cudaStream_t stream) {
  dispatchMmaHeadDim(p.headDim, [&](auto headDim) {
    BERTC_LAUNCH((keyValueGradKernel<T, decltype(headDim)::value>), blockGrid(p, p.kvHeads),
                 kThreads, 0, stream, dctx, q, k, v, mask, dk, dv, p);
    BERTC_LAUNCH((queryGradKernel<T, decltype(headDim)::value>), blockGrid(p, p.heads), kThreads, 0,
                 stream, dctx, q, k, v, mask, dq, p);
  });
}

#define INSTANTIATE(T)                                                                             \
  template void mmaBackward(const T *, const T *, const T *, const T *, const int32_t *, T *, T *, \
                            T *, const Params &, cudaStream_t);
INSTANTIATE(::bertc::bf16)
INSTANTIATE(::bertc::fp16)
#undef INSTANTIATE

} // namespace bertc::cuda::attention
