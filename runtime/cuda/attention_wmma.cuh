// Internal to the fused attention of 16-bit storage on tensor cores
// (attention_wmma_forward.cu, attention_wmma_backward.cu): the tiles, fragments and staging
// its kernels share. Their products run through CUDA's warp matrix functions (nvcuda::wmma:
// 16 x 16 x 16 tiles, 16-bit operands, fp32 accumulation); everything else is the fused
// kernels' arithmetic (attention_common.cuh: the same scores, probabilities from the lse and
// dropout bits).
//
// Layout. A block of kThreads threads owns kBlockRows rows (queries, or keys for the key and
// value gradients) of one (head, sequence); each of its kWarps warps owns kWarpRows of them
// and keeps their operand rows in registers as matrix_a fragments. The other operand streams
// through shared memory kStreamRows rows at a time, in 16 bits, its head dimension padded
// with zeros to D (32 or 64). A fragment's element-to-lane mapping is unspecified, so a
// warp's row-wise work goes through shared memory: it stores its [kWarpRows, kStreamRows]
// fp32 scores there, each lane takes half a row (row lane / 2, kStreamRows / 2 columns from
// 16 * (lane % 2)), and writes the 16-bit probabilities or score gradients the next product
// reads as its matrix_a.
//
// WMMA's rules: a fragment's pointer is 32-byte aligned and its leading dimension a multiple
// of 16 bytes. The 16-bit tiles' rows are D + 8 elements long and every fragment starts at a
// row that is a multiple of 16 and a column that is a multiple of 16, so both hold (and the
// padding spreads a fragment's rows over the shared memory banks).
#pragma once

#include "attention_common.cuh"

#include <mma.h>

namespace bertc::cuda::attention::wmma_tiles {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = kThreads / 32;
constexpr int kWarpRows = 16;
constexpr int kBlockRows = kWarps * kWarpRows;
/// Rows of a streamed tile; as keys, one word of the backward's dropout mask
/// (storedKeepBits).
constexpr int kStreamRows = 32;

/// Elements per row of a 16-bit operand tile in shared memory.
template <int D> constexpr int kTileStride = D + 8;
/// Floats per row of a warp's staged scores (or score gradients).
constexpr int kScoreStride = kStreamRows + 4;
/// Elements per row of a warp's staged 16-bit probabilities (or score gradients).
constexpr int kProbStride = kStreamRows + 8;

/// CUDA's type of a 16-bit storage type, and the first architecture with its WMMA.
template <typename T> struct Wmma;
template <> struct Wmma<bf16> {
  using Type = __nv_bfloat16;
  static constexpr int kMinArch = 800;
};
template <> struct Wmma<fp16> {
  using Type = __half;
  static constexpr int kMinArch = 700;
};

#if defined(__CUDA_ARCH__)
constexpr int kCompiledArch = __CUDA_ARCH__;
#else
constexpr int kCompiledArch = 1000; // the host pass and the simulated device
#endif
/// Whether this compilation pass has T's warp matrix functions: the kernels of an older
/// architecture are empty, and the launchers never pick them there (attentionOnTensorCores).
template <typename T> constexpr bool kCompiledForTensorCores = kCompiledArch >= Wmma<T>::kMinArch;
/// The first architecture with mma.sync m16n8k16 for both 16-bit types: the one-pass
/// forward (attention_mma_forward.cu) runs there, the two-pass one below it.
constexpr int kMmaMinArch = 800;

using Accumulator = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
template <typename W> using RowsA = wmma::fragment<wmma::matrix_a, 16, 16, 16, W, wmma::row_major>;
/// The transpose of a row-major tile (k^T from the rows of k).
template <typename W>
using TransposedB = wmma::fragment<wmma::matrix_b, 16, 16, 16, W, wmma::col_major>;
template <typename W> using RowsB = wmma::fragment<wmma::matrix_b, 16, 16, 16, W, wmma::row_major>;

__device__ __forceinline__ void storeWmma(__nv_bfloat16 *p, float value) {
  *p = __float2bfloat16_rn(value);
}
__device__ __forceinline__ void storeWmma(__half *p, float value) { *p = __float2half_rn(value); }

/// All threads of the block: `rows` head rows from `first` of head h of sequence b of x into
/// the shared `tile`, zeros beyond seq and headDim; 16 bytes of a row a thread at a time
/// (one access each where the head dimension and the row's alignment allow).
template <int D, typename T, typename W>
__device__ void loadRows(const T *x, const Params &p, int64_t b, int64_t h, int64_t first, int rows,
                         W *tile) {
  constexpr int kGroup = kVectorValues<T>, kGroupsPerRow = D / kGroup;
  static_assert(D % kGroup == 0, "a tile row is whole 16-byte groups");
  using Group = Vector<T, kGroup>; // its values are W's, so `tile` is written as W
  for (int e = threadIdx.x; e < rows * kGroupsPerRow; e += kThreads) {
    const int r = e / kGroupsPerRow, c = e % kGroupsPerRow * kGroup;
    const int64_t i = first + r;
    Group group{};
    if (i < p.seq && c < p.headDim) {
      const T *source = x + p.tokenOffset(b, i, h) + c;
      if (c + kGroup <= p.headDim && asVector<kGroup>(source, kGroup))
        group = *reinterpret_cast<const Group *>(source);
      else
        for (int j = 0; j < kGroup && c + j < p.headDim; ++j)
          group.values[j] = *reinterpret_cast<const W *>(source + j);
    }
    *reinterpret_cast<Group *>(tile + r * kTileStride<D> + c) = group;
  }
}

/// The warp's 16 rows of a shared tile as matrix_a fragments, D / 16 of them.
template <int D, typename W>
__device__ void loadFragments(const W *warpRows, RowsA<W> (&a)[D / 16]) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    wmma::load_matrix_sync(a[kk], warpRows + kk * 16, kTileStride<D>);
}

/// All threads of the block: its kBlockRows rows of x from `firstRow` through the shared
/// `tile`, and the calling warp's 16 of them as matrix_a fragments; the tile is free again
/// on return.
template <int D, typename T, typename W>
__device__ void loadOwnRows(const T *x, const Params &p, int64_t b, int64_t h, int64_t firstRow,
                            W *tile, RowsA<W> (&a)[D / 16]) {
  loadRows<D>(x, p, b, h, firstRow, kBlockRows, tile);
  __syncthreads();
  loadFragments<D>(tile + int(threadIdx.x / 32) * kWarpRows * kTileStride<D>, a);
  __syncthreads();
}

/// s = a x^T: the warp's 16 rows against the kStreamRows rows of a shared tile x.
template <int D, typename W>
__device__ void productWithRows(const RowsA<W> (&a)[D / 16], const W *tile,
                                Accumulator (&s)[kStreamRows / 16]) {
#pragma unroll
  for (int t = 0; t < kStreamRows / 16; ++t) {
    wmma::fill_fragment(s[t], 0.0f);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      TransposedB<W> rows;
      wmma::load_matrix_sync(rows, tile + t * 16 * kTileStride<D> + kk * 16, kTileStride<D>);
      wmma::mma_sync(s[t], a[kk], rows, s[t]);
    }
  }
}

/// acc += weights x: the warp's staged [16, kStreamRows] 16-bit weights times the
/// [kStreamRows, D] shared tile x.
template <int D, typename W>
__device__ void accumulateProduct(const W *weights, const W *tile, Accumulator (&acc)[D / 16]) {
  RowsA<W> a[kStreamRows / 16];
#pragma unroll
  for (int kk = 0; kk < kStreamRows / 16; ++kk)
    wmma::load_matrix_sync(a[kk], weights + kk * 16, kProbStride);
#pragma unroll
  for (int n = 0; n < D / 16; ++n)
#pragma unroll
    for (int kk = 0; kk < kStreamRows / 16; ++kk) {
      RowsB<W> rows;
      wmma::load_matrix_sync(rows, tile + kk * 16 * kTileStride<D> + n * 16, kTileStride<D>);
      wmma::mma_sync(acc[n], a[kk], rows, acc[n]);
    }
}

/// The warp's [16, kStreamRows] scores into its shared staging area, visible to all its lanes.
__device__ __forceinline__ void stageScores(const Accumulator (&s)[kStreamRows / 16],
                                            float *staging) {
#pragma unroll
  for (int t = 0; t < kStreamRows / 16; ++t)
    wmma::store_matrix_sync(staging + t * 16, s[t], kScoreStride, wmma::mem_row_major);
  __syncwarp();
}

/// The calling lane's half row in a warp's staged tile: its row, which half (0 or 1, as
/// keepBits<2>'s part) and that half's first column.
struct LaneCells {
  int row, half, firstColumn;
  __device__ LaneCells()
      : row(int(threadIdx.x % 32) / 2), half(int(threadIdx.x % 2)),
        firstColumn(half * (kStreamRows / 2)) {}
};

/// Stores the warp's [16, D] results (its rows from `firstRow` of head h of sequence b of x)
/// through its staging area, 32 columns at a time; rows past seq and dims past headDim are
/// not written.
template <int D, typename T>
__device__ void storeRows(const Accumulator (&acc)[D / 16], float *staging, T *x, const Params &p,
                          int64_t b, int64_t h, int64_t firstRow) {
  const LaneCells cells;
  const int64_t i = firstRow + cells.row;
#pragma unroll
  for (int n = 0; n < D / kStreamRows; ++n) {
    Accumulator columns[kStreamRows / 16];
#pragma unroll
    for (int t = 0; t < kStreamRows / 16; ++t)
      columns[t] = acc[n * (kStreamRows / 16) + t];
    stageScores(columns, staging);
    for (int c = 0; c < kStreamRows / 2; ++c) {
      const int dim = n * kStreamRows + cells.firstColumn + c;
      if (i < p.seq && dim < p.headDim)
        storeFloat(x + p.tokenOffset(b, i, h) + dim,
                   staging[cells.row * kScoreStride + cells.firstColumn + c]);
    }
    __syncwarp(); // the staging area is read before the next columns overwrite it
  }
}

/// The additive mask of the Keys keys from `first` (-inf past seq) into `bias`.
template <int Keys = kStreamRows>
__device__ __forceinline__ void loadKeyBias(const int32_t *mask, const Params &p, int64_t b,
                                            int64_t first, float *bias) {
  static_assert(Keys <= kThreads, "a thread a key");
  if (threadIdx.x < Keys) {
    const int64_t j = first + threadIdx.x;
    bias[threadIdx.x] = j < p.seq ? keyMaskBias(mask, p, b, j) : -INFINITY;
  }
}

/// The grid: a block per kBlockRows rows of each (head, sequence).
inline dim3 blockGrid(const Params &p) {
  return dim3(unsigned((p.seq + kBlockRows - 1) / kBlockRows), unsigned(p.heads),
              unsigned(p.batch));
}

} // namespace bertc::cuda::attention::wmma_tiles

namespace bertc::cuda::attention {

/// The current device's compute capability as 100 major + 10 minor (sm_86: 860).
int deviceArch();

template <typename T>
void tensorCoreForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                       const Params &p, cudaStream_t stream);
/// dq, dk and dv from the row terms already in p.rowTerm.
template <typename T>
void tensorCoreBackward(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                        T *dq, T *dk, T *dv, const Params &p, cudaStream_t stream);

} // namespace bertc::cuda::attention
