// The fused attention forward of 16-bit storage from sm_80: the result of
// attention_forward.cu's kernel, ctx = dropout(softmax(q k^T / sqrt(d) + maskBias)) v per
// head, in one pass over the keys with every score in registers (FlashAttention-2's scheme).
// Its products are mma.sync m16n8k16 (warp_matrix.cuh), whose documented fragment layout is
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
// (so a fully masked row averages all its keys, as on the CPU).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "attention_wmma.cuh"
#include "launch.cuh"
#include "warp_matrix.cuh"

namespace bertc::cuda::attention {

namespace {
using namespace wmma_tiles;
using namespace warp_matrix;

/// Keys a streamed tile holds: kKeyBlocks blocks of 8, an mma's columns each.
constexpr int kKeyTile = 64;
constexpr int kKeyBlocks = kKeyTile / 8;
static_assert(kKeyTile == kBlockRows, "the queries' tile is the first key tile's room");
static_assert(kKeyTile % 32 == 0, "a tile's dropout bits are whole words");

/// The maximum, then the sum, of a row's values over its four lanes.
__device__ __forceinline__ float rowMaximum(float value) {
  value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 1));
  return fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 2));
}
__device__ __forceinline__ float rowTotal(float value) {
  value += __shfl_xor_sync(0xffffffffu, value, 1);
  return value + __shfl_xor_sync(0xffffffffu, value, 2);
}

/// The row address lane `lane` gives ldmatrix for four 8 x 8 matrices of a shared tile, from
/// rows [row0, row0 + 16) and columns [column0, column0 + 16). With rowBlocksFirst their
/// order is (upper rows, left columns), (lower, left), (upper, right), (lower, right): the
/// A fragment of those rows and columns, or transposed, the B fragments of two 8-column
/// blocks (P v's values). Otherwise (upper, left), (upper, right), (lower, left), (lower,
/// right): the B fragments of two 8-row blocks (q k^T's keys).
template <int D, typename W>
__device__ __forceinline__ const W *matrixRow(const W *tile, int row0, int column0, int lane,
                                              bool rowBlocksFirst) {
  const int matrix = lane / 8;
  const int rowBlock = rowBlocksFirst ? matrix % 2 : matrix / 2;
  const int columnBlock = rowBlocksFirst ? matrix / 2 : matrix % 2;
  return tile + (row0 + 8 * rowBlock + lane % 8) * kTileStride<D> + column0 + 8 * columnBlock;
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    forwardKernel(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                  Params p) {
  if constexpr (kCompiledArch >= kMmaMinArch) {
    using W = typename Wmma<T>::Type;
    __shared__ __align__(16) W keys[kKeyTile * kTileStride<D>];
    __shared__ __align__(16) W values[kKeyTile * kTileStride<D>];
    __shared__ float keyBias[kKeyTile];
    const int64_t b = blockIdx.z, h = blockIdx.y;
    const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32), t = lane % 4;
    const int64_t firstQuery = int64_t(blockIdx.x) * kBlockRows;
    // The lane's two rows: g and g + 8 of the warp's 16.
    const int64_t row[2] = {firstQuery + warp * kWarpRows + lane / 4,
                            firstQuery + warp * kWarpRows + lane / 4 + 8};

    uint32_t query[D / 16][4];
    loadRows<D>(q, p, b, h, firstQuery, kBlockRows, keys);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      loadMatrixX4<false>(query[kk], matrixRow<D>(keys, warp * kWarpRows, kk * 16, lane, true));

    float out[D / 8][4] = {};
    float runningMax[2] = {-INFINITY, -INFINITY}, runningSum[2] = {0.0f, 0.0f};
    for (int64_t first = 0; first < p.seq; first += kKeyTile) {
      __syncthreads(); // the previous tile (or the queries) is consumed
      loadRows<D>(k, p, b, h, first, kKeyTile, keys);
      loadRows<D>(v, p, b, h, first, kKeyTile, values);
      loadKeyBias<kKeyTile>(mask, p, b, first, keyBias);
      __syncthreads();

      float s[kKeyBlocks][4] = {};
#pragma unroll
      for (int n = 0; n < kKeyBlocks; n += 2)
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          uint32_t rows[4];
          loadMatrixX4<false>(rows, matrixRow<D>(keys, n * 8, kk * 16, lane, false));
          mmaM16N8K16<W>(s[n], query[kk], {rows[0], rows[1]});
          mmaM16N8K16<W>(s[n + 1], query[kk], {rows[2], rows[3]});
        }

      float tileMax[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int n = 0; n < kKeyBlocks; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[n][e] = maskedScore(s[n][e], p.scale, keyBias[n * 8 + 2 * t + e % 2]);
          tileMax[e / 2] = fmaxf(tileMax[e / 2], s[n][e]);
        }
      // Key 0 is in the first tile, so every row's maximum is finite from it on.
      float newMax[2], correction[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        newMax[r] = fmaxf(runningMax[r], rowMaximum(tileMax[r]));
        correction[r] = expf(runningMax[r] - newMax[r]);
        runningSum[r] *= correction[r];
        runningMax[r] = newMax[r];
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
              count > 0 ? keepBits<4>(p, b, p.dropoutIndex(h, row[r], wordFirst), count, t) : 0u;
      }
#pragma unroll
      for (int n = 0; n < kKeyBlocks; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = e / 2, key = n * 8 + 2 * t + e % 2;
          const float prob = expf(s[n][e] - runningMax[r]);
          runningSum[r] += prob;
          s[n][e] = (kept[r][key / 32] >> (key % 32)) & 1u ? prob : 0.0f;
        }

      // out += P v: key blocks 2kk and 2kk + 1 of the scores are P's matrix_a for keys
      // 16kk .. 16kk + 15.
#pragma unroll
      for (int kk = 0; kk < kKeyTile / 16; ++kk) {
        const float(&low)[4] = s[2 * kk], (&high)[4] = s[2 * kk + 1];
        const uint32_t probs[4] = {packPair(W{}, low[0], low[1]), packPair(W{}, low[2], low[3]),
                                   packPair(W{}, high[0], high[1]),
                                   packPair(W{}, high[2], high[3])};
#pragma unroll
        for (int n = 0; n < D / 8; n += 2) {
          uint32_t columns[4];
          loadMatrixX4<true>(columns, matrixRow<D>(values, kk * 16, n * 8, lane, true));
          mmaM16N8K16<W>(out[n], probs, {columns[0], columns[1]});
          mmaM16N8K16<W>(out[n + 1], probs, {columns[2], columns[3]});
        }
      }
    }

#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float sum = rowTotal(runningSum[r]);
      if (row[r] >= p.seq)
        continue;
      if (t == 0)
        lse[p.statIndex(b, h, row[r])] = runningMax[r] + logf(sum);
      const float factor = p.keptScale / sum;
      T *target = ctx + p.tokenOffset(b, row[r], h);
#pragma unroll
      for (int n = 0; n < D / 8; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int dim = n * 8 + 2 * t + c;
          if (dim < p.headDim)
            storeFloat(target + dim, out[n][2 * r + c] * factor);
        }
    }
  }
}
} // namespace

template <typename T>
void mmaForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                const Params &p, cudaStream_t stream) {
  dispatchHeadDim(p.headDim, [&](auto headDim) {
    constexpr int D = decltype(headDim)::value;
    if constexpr (D <= kMaxTensorCoreAttentionHeadDim)
      BERTC_LAUNCH((forwardKernel<T, D>), blockGrid(p), kThreads, 0, stream, q, k, v, mask, ctx,
                   lse, p);
  });
}

#define INSTANTIATE(T)                                                                             \
  template void mmaForward(const T *, const T *, const T *, const int32_t *, T *, float *,         \
                           const Params &, cudaStream_t);
INSTANTIATE(::bertc::bf16)
INSTANTIATE(::bertc::fp16)
#undef INSTANTIATE

} // namespace bertc::cuda::attention
