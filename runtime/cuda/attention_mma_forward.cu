// The fused attention forward of 16-bit storage from sm_80: the result of
// attention_forward.cu's kernel, ctx = dropout(softmax(q k^T / sqrt(d) + maskBias)) v per
// head, in one pass over the keys with every score in registers (FlashAttention-2's scheme).
// Its products are mma.sync m16n8k16 (attention_mma.cuh), whose documented fragment layout is
// what makes that possible: a lane holds two rows' scores (row group g = lane / 4: rows g
// and g + 8 of its warp's 16) at known columns, so the row maxima and sums take two shuffles
// among the row's four lanes, the running output is rescaled in place, and a tile's scores,
// once probabilities, are already the matrix_a registers of P v.
//
// A block of kThreads threads owns kBlockRows queries of one (head, sequence), 16 a warp;
// the keys and values stream through shared memory kKeyTile rows at a time (the queries'
// tile first), read into fragments by ldmatrix. Per tile and row: the masked, scaled
// scores; the running maximum m and sum l of exp(s - m) (undropped); the probabilities
// exp(s - m), zero where dropout drops them, rounded to 16 bits for P v. At the end ctx =
// out * keptScale / l and lse = m + log l. Keys past seq score -inf, masked keys -FLT_MAX
// (so a fully masked row averages all its keys, as on the CPU). A query head reads the k and
// v of its key/value head. With causal, the block stops at the key tile of its last query:
// the tiles above the diagonal, about half of them, are never loaded or multiplied; in the
// diagonal tile a query's later keys score -inf.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "attention_mma.cuh"
#include "launch.cuh"

namespace bertc::cuda::attention {

namespace {
using namespace mma_tiles;

/// A row's values lie in its four adjacent lanes (t = 0 .. 3).
constexpr int kRowLanes = 4;

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    forwardKernel(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                  Params p) {
  if constexpr (kCompiledForTensorCores<T>) {
    using W = typename MmaType<T>::Type;
    __shared__ KeyTile<D, kKeyTile, W> tile;
    const int64_t b = blockIdx.z, h = blockIdx.y;
    const int warpRow0 = int(threadIdx.x / 32) * kWarpRows, t = int(threadIdx.x % 4);
    const int64_t firstQuery = int64_t(blockIdx.x) * kBlockRows;
    const LaneRows lane(firstQuery);
    const int32_t words[2] = {documentWord(mask, p, b, lane.row[0]),
                              documentWord(mask, p, b, lane.row[1])};

    uint32_t query[D / 16][4];
    loadRows<D>(p.queryRows(q, b, h), p, firstQuery, kBlockRows, tile.keys);
    __syncthreads();
    loadOperandRows<D>(tile.keys, warpRow0, query);

    float out[D / 8][4] = {};
    float runningMax[2] = {-INFINITY, -INFINITY}, runningSum[2] = {0.0f, 0.0f};
    const int64_t keyEnd = p.keyEnd(firstQuery + kBlockRows);
    for (int64_t first = 0; first < keyEnd; first += kKeyTile) {
      __syncthreads(); // the previous tile (or the queries) is consumed
      tile.load(k, v, mask, p, b, h / p.group(), first);
      __syncthreads();

      float s[kKeyTile / 8][4] = {};
      productWithRows<D, kKeyTile>(query, tile.keys, s);
      float tileMax[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int n = 0; n < kKeyTile / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = e / 2, key = laneColumn(n, e);
          s[n][e] = maskedScore(
              s[n][e], p.scale,
              visibleBias(p, tile.bias[key], tile.words[key], words[r], lane.row[r], first + key));
          tileMax[r] = fmaxf(tileMax[r], s[n][e]);
        }
      // Key 0, which every query reaches, is in the first tile, so every row's maximum is
      // finite from it on.
      float correction[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float newMax = fmaxf(runningMax[r], laneGroupMax<kRowLanes>(tileMax[r]));
        correction[r] = expf(runningMax[r] - newMax);
        runningSum[r] *= correction[r];
        runningMax[r] = newMax;
      }
#pragma unroll
      for (int n = 0; n < D / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          out[n][e] *= correction[e / 2];

      // Row r's dropout bits for keys first + 32w .. + 31, drawn by its four lanes together.
      uint32_t kept[2][kKeyTile / 32];
#pragma unroll
      for (int w = 0; w < kKeyTile / 32; ++w) {
        const int64_t wordFirst = first + 32 * w;
        const int count = p.seq - wordFirst < 32 ? int(p.seq - wordFirst) : 32;
#pragma unroll
        for (int r = 0; r < 2; ++r)
          kept[r][w] =
              count > 0
                  ? keepBits<kRowLanes>(p, b, p.dropoutIndex(h, lane.row[r], wordFirst), count, t)
                  : 0u;
      }
#pragma unroll
      for (int n = 0; n < kKeyTile / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = e / 2, key = laneColumn(n, e);
          const float prob = expf(s[n][e] - runningMax[r]);
          runningSum[r] += prob;
          s[n][e] = (kept[r][key / 32] >> (key % 32)) & 1u ? prob : 0.0f;
        }
      accumulateProduct<D, kKeyTile>(s, tile.values, out);
    }

#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float sum = laneGroupSum<kRowLanes>(runningSum[r]);
      if (lane.row[r] >= p.seq)
        continue;
      if (t == 0)
        lse[p.statIndex(b, h, lane.row[r])] = runningMax[r] + logf(sum);
      storeRow<D>(out, r, p.keptScale / sum, p.queryRows(ctx, b, h), p, lane.row[r]);
    }
  } else {
    stopWithoutTensorCores();
  }
}
} // namespace

template <typename T>
void mmaForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                const Params &p, cudaStream_t stream) {
  dispatchMmaHeadDim(p.headDim, [&](auto headDim) {
    BERTC_LAUNCH((forwardKernel<T, decltype(headDim)::value>), blockGrid(p, p.heads), kThreads, 0,
                 stream, q, k, v, mask, ctx, lse, p);
  });
}

#define INSTANTIATE(T)                                                                             \
  template void mmaForward(const T *, const T *, const T *, const int32_t *, T *, float *,         \
                           const Params &, cudaStream_t);
INSTANTIATE(::bertc::bf16)
INSTANTIATE(::bertc::fp16)
#undef INSTANTIATE

} // namespace bertc::cuda::attention

namespace bertc::cuda {

// Whether T's tensor-core kernels have a body on this device is a question of the code that
// runs, not of the GPU: the architecture its image was compiled for (the PTX virtual
// architecture, __CUDA_ARCH__ / 10 there), which is older than the GPU where the build left
// the GPU's own out (a newer GPU, or CMAKE_CUDA_ARCHITECTURES without it) and the GPU runs
// an older architecture's PTX; kernels compiled below T's kMinArch are empty.
template <typename T> bool attentionOnTensorCores(int64_t headDim) {
  if constexpr (std::is_same_v<T, float>) {
    return false;
  } else {
    if (headDim > kMaxTensorCoreAttentionHeadDim)
      return false;
    cudaFuncAttributes compiled{};
    BERTC_CUDA_CHECK(cudaFuncGetAttributes(&compiled, attention::forwardKernel<T, 64>));
    return compiled.ptxVersion * 10 >= attention::mma_tiles::MmaType<T>::kMinArch;
  }
}

template bool attentionOnTensorCores<float>(int64_t);
template bool attentionOnTensorCores<bf16>(int64_t);
template bool attentionOnTensorCores<fp16>(int64_t);

} // namespace bertc::cuda
