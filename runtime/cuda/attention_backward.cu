// The fused attention backward. Nothing of size [seq, seq] is stored: the probabilities
// are recomputed from the scores and the forward's log-sum-exp (p = exp(s - lse)).
// With P the probabilities, z the dropout factors (keptScale or 0) and dctx the incoming
// gradient, per (sequence, head):
//   dv_j = sum_i P_ij z_ij dctx_i
//   dP_ij = z_ij (dctx_i · v_j)
//   dS_ij = P_ij (dP_ij - r_i) / sqrt(d),   r_i = sum_j P_ij dP_ij = dctx_i · ctx_i
//   dq_i = sum_j dS_ij k_j,   dk_j = sum_i dS_ij q_i
// (r_i = dctx_i · ctx_i because ctx_i = sum_j P_ij z_ij v_j.) A key/value head's dk and dv
// are those sums over the query heads of its group too. Three kernels:
//   1. r_i for every row, from the forward's output, into the workspace;
//   2. key-owned: a thread row holds k_j and v_j of one key/value head, streams query tiles
//      (q, dctx) of each query head of its group through shared memory and accumulates dk_j
//      and dv_j in registers; the block draws each tile's dropout decisions together
//      (fillKeepTile), eight keys per Philox call, and stores them as bits in the workspace
//      (storeKeepWords);
//   3. query-owned: a thread row holds q_i and dctx_i, streams key tiles (k, v) and
//      accumulates dq_i, reading those bits instead of drawing the mask again.
// Splitting dq from dk/dv recomputes the scores twice but needs no atomics and no fp32 dq
// buffer, and every sum runs in a fixed order. With causal, a key block starts at the query
// tile of its first key and a query block stops at the key tile of its last query. With
// 16-bit storage, kernels 2 and 3 are attention_mma_backward.cu's tensor-core ones where the
// GPU and the head dimension allow (attentionOnTensorCores).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "attention_common.cuh"
#include "attention_mma.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace attention {
namespace {
/// A warp a row (the chunked backward's sum, so both give the same bits).
template <typename T> __global__ void rowTermKernel(const T *dctx, const T *ctx, Params p) {
  const int64_t rows = p.batch * p.heads * p.seq;
  for (int64_t row = gridStrideBegin() / 32; row < rows; row += gridStride() / 32) {
    const int64_t i = row % p.seq, h = (row / p.seq) % p.heads, b = row / (p.seq * p.heads);
    const float term = headRowTerm(dctx, ctx, p.tokenOffset(b, i, h), p.headDim);
    if (threadIdx.x % 32 == 0)
      p.rowTerm[row] = term;
  }
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    keyValueGradKernel(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                       T *dk, T *dv, Params p) {
  using Layout = HeadLayout<D>;
  __shared__ __align__(16) float queries[kTile * Layout::kRowFloats];
  __shared__ __align__(16) float outputGrads[kTile * Layout::kRowFloats];
  __shared__ float tileLse[kTile], tileRowTerm[kTile];
  __shared__ int32_t tileWords[kTile];
  __shared__ uint8_t keepTile[kTile][Layout::kRowsPerBlock];
  const int64_t b = blockIdx.z, kvHead = blockIdx.y;
  const int part = threadIdx.x % Layout::kLanesPerRow;
  const int64_t firstKey = int64_t(blockIdx.x) * Layout::kRowsPerBlock;
  const int row = threadIdx.x / Layout::kLanesPerRow;
  const int64_t j = firstKey + row;
  const bool exists = j < p.seq;

  float key[kDimsPerThread], value[kDimsPerThread];
  float keyGrad[kDimsPerThread] = {}, valueGrad[kDimsPerThread] = {};
  loadSlice(p.keyRows(k, b, kvHead), p, j, part, exists, key);
  loadSlice(p.keyRows(v, b, kvHead), p, j, part, exists, value);
  const float bias = exists ? keyMaskBias(mask, p, b, j) : 0.0f;
  const int32_t keyWord = documentWord(mask, p, b, j);
  for (int64_t h = kvHead * p.group(); h < (kvHead + 1) * p.group(); ++h)
    for (int64_t first = p.firstQueryTile(firstKey, kTile); first < p.seq; first += kTile) {
      __syncthreads(); // the previous tile is consumed
      loadTile<D>(p.queryRows(q, b, h), p, first, queries);
      loadTile<D>(p.queryRows(dctx, b, h), p, first, outputGrads);
      if (threadIdx.x < kTile && first + threadIdx.x < p.seq) {
        const int64_t stat = p.statIndex(b, h, first + threadIdx.x);
        tileLse[threadIdx.x] = p.lse[stat];
        tileRowTerm[threadIdx.x] = p.rowTerm[stat];
        tileWords[threadIdx.x] = documentWord(mask, p, b, first + threadIdx.x);
      }
      if (p.dropoutRate > 0.0f)
        fillKeepTile<Layout::kRowsPerBlock>(p, b, h, first, firstKey, keepTile);
      __syncthreads();
      if (p.dropoutRate > 0.0f)
        storeKeepWords<Layout::kRowsPerBlock>(p, b, h, first, firstKey, keepTile);

      const int count = p.seq - first < kTile ? int(p.seq - first) : kTile;
      uint32_t kept = 0xffffffffu;
      if (p.dropoutRate > 0.0f && exists) {
        kept = 0;
        for (int ii = 0; ii < count; ++ii)
          kept |= uint32_t(keepTile[ii][row]) << ii;
      }
      for (int ii = 0; ii < count; ++ii) {
        const int64_t i = first + ii;
        const float score =
            maskedScore(rowSum<D>(dotSlice(key, tileSlice<D>(queries, ii, part))), p.scale,
                        visibleBias(p, bias, keyWord, tileWords[ii], i, j));
        const float prob = probabilityFromLse(score, tileLse[ii], p.reach(i));
        const float factor = dropoutFactor(p, kept, ii);
        const float *outputGrad = tileSlice<D>(outputGrads, ii, part);
        axpySlice(valueGrad, prob * factor, outputGrad);
        const float probGrad = rowSum<D>(dotSlice(value, outputGrad)) * factor;
        const float scoreGrad = prob * (probGrad - tileRowTerm[ii]) * p.scale;
        axpySlice(keyGrad, scoreGrad, tileSlice<D>(queries, ii, part));
      }
    }
  if (!exists)
    return;
  storeSlice(p.keyRows(dk, b, kvHead), p, j, part, keyGrad, 1.0f);
  storeSlice(p.keyRows(dv, b, kvHead), p, j, part, valueGrad, 1.0f);
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    queryGradKernel(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask, T *dq,
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

  float query[kDimsPerThread], outputGrad[kDimsPerThread], queryGrad[kDimsPerThread] = {};
  loadSlice(p.queryRows(q, b, h), p, i, part, exists, query);
  loadSlice(p.queryRows(dctx, b, h), p, i, part, exists, outputGrad);
  // A row that does not exist gets probabilities 0 (and its results are not stored).
  const int64_t stat = exists ? p.statIndex(b, h, i) : 0;
  const float lse = exists ? p.lse[stat] : 0.0f;
  const float rowTerm = exists ? p.rowTerm[stat] : 0.0f;
  const int64_t keyEnd = p.keyEnd(firstQuery + Layout::kRowsPerBlock);
  for (int64_t first = 0; first < keyEnd; first += kTile) {
    __syncthreads(); // the previous tile is consumed
    loadTile<D>(p.keyRows(k, b, kvHead), p, first, keys);
    loadTile<D>(p.keyRows(v, b, kvHead), p, first, values);
    loadKeyBias<kTile>(mask, p, b, first, keyBias, keyWords);
    __syncthreads();

    const int count = p.seq - first < kTile ? int(p.seq - first) : kTile;
    const uint32_t kept = storedKeepBits(p, b, h, i, first);
    for (int jj = 0; jj < count; ++jj) {
      const float *keySlice = tileSlice<D>(keys, jj, part);
      const float score =
          maskedScore(rowSum<D>(dotSlice(query, keySlice)), p.scale,
                      visibleBias(p, keyBias[jj], keyWords[jj], word, i, first + jj));
      const float prob = probabilityFromLse(score, lse, p.reach(i));
      const float factor = dropoutFactor(p, kept, jj);
      const float probGrad =
          rowSum<D>(dotSlice(outputGrad, tileSlice<D>(values, jj, part))) * factor;
      axpySlice(queryGrad, prob * (probGrad - rowTerm) * p.scale, keySlice);
    }
  }
  if (exists)
    storeSlice(p.queryRows(dq, b, h), p, i, part, queryGrad, 1.0f);
}
} // namespace
} // namespace attention

template <typename T>
void attentionBackward(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                       const T *ctx, const float *lse, float *workspace, T *dq, T *dk, T *dv,
                       int64_t batch, int64_t seq, int64_t hidden, AttentionHeads heads,
                       float dropoutRate, const DropoutKey &key, cudaStream_t stream) {
  using namespace attention;
  Params p = makeParams(batch, seq, hidden, heads, dropoutRate, key, lse, workspace);
  if (dropoutRate > 0.0f)
    p.keepWords =
        reinterpret_cast<uint32_t *>(workspace + attentionRowTermFloats(batch, p.heads, seq));
  if (batch == 0 || seq == 0)
    return;
  BERTC_LAUNCH(rowTermKernel, gridFor(p.batch * p.heads * p.seq * 32), kElementwiseThreads, 0,
               stream, dctx, ctx, p);
  if constexpr (!std::is_same_v<T, float>)
    if (attentionOnTensorCores<T>(p.headDim))
      return mmaBackward(dctx, q, k, v, mask, dq, dk, dv, p, stream);
  dispatchHeadDim(p.headDim, [&](auto headDim) {
    constexpr int D = decltype(headDim)::value;
    BERTC_LAUNCH((keyValueGradKernel<T, D>), rowGrid<D>(p, p.kvHeads), kThreads, 0, stream, dctx, q,
                 k, v, mask, dk, dv, p);
    BERTC_LAUNCH((queryGradKernel<T, D>), rowGrid<D>(p, p.heads), kThreads, 0, stream, dctx, q, k,
                 v, mask, dq, p);
  });
}

#define INSTANTIATE(T)                                                                             \
  template void attentionBackward(const T *, const T *, const T *, const T *, const int32_t *,     \
                                  const T *, const float *, float *, T *, T *, T *, int64_t,       \
                                  int64_t, int64_t, AttentionHeads, float, const DropoutKey &,     \
                                  cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
