// Internal to the fused attention of 16-bit storage on tensor cores (attention_mma_forward.cu,
// attention_mma_backward.cu): the tiles and the products on mma.sync m16n8k16
// (warp_matrix.cuh) whose results stay in registers. A block of kThreads threads owns
// kBlockRows rows (queries, or keys for the key and value gradients) of one (head,
// sequence); each of its kWarps warps owns kWarpRows of them and holds their operand rows
// as matrix_a fragments. The other operand streams through shared memory in 16-bit tiles
// whose rows are kTileStride<D> values long (loadRows: zeros past seq and the head
// dimension, D being it rounded up to 32, 64, 96 or 128: dispatchMmaHeadDim). A product's 16 x N
// result is N / 8 accumulators of four floats: lane l holds rows g = l / 4 and g + 8 and, in
// accumulator n, columns 8n + 2t and 8n + 2t + 1 (t = l % 4); element e of an accumulator is row g
// + 8 (e / 2), column 8n + 2t + e % 2. Accumulators 2kk and 2kk + 1, rounded to 16 bits, are the
// matrix_a fragment of columns 16kk .. 16kk + 15, so a product's result is the next product's
// operand without leaving the registers.
//
// A tile's rows start 16-byte aligned (D + 8 16-bit values), as ldmatrix needs; the 8 rows
// of one ldmatrix matrix then fall in distinct shared memory banks.
#pragma once

#include "attention_common.cuh"
#include "warp_matrix.cuh"

namespace bertc::cuda::attention::mma_tiles {

using namespace warp_matrix;

constexpr int kWarps = kThreads / 32;
constexpr int kWarpRows = 16;
constexpr int kBlockRows = kWarps * kWarpRows;

/// Keys a streamed key tile holds: the block's own rows' room (which their tile fills first),
/// and whole words of the dropout mask.
constexpr int kKeyTile = kBlockRows;
static_assert(kKeyTile % 32 == 0, "a key tile's dropout bits are whole words");

/// Elements per row of a 16-bit operand tile in shared memory.
template <int D> constexpr int kTileStride = D + 8;

/// CUDA's type of a 16-bit storage type, and the first architecture with its mma.sync
/// (sm_75 has fp16's as two m16n8k8 products, warp_matrix.cuh).
template <typename T> struct MmaType;
template <> struct MmaType<bf16> {
  using Type = __nv_bfloat16;
  static constexpr int kMinArch = 800;
};
template <> struct MmaType<fp16> {
  using Type = __half;
  static constexpr int kMinArch = 750;
};

#if defined(__CUDA_ARCH__)
constexpr int kCompiledArch = __CUDA_ARCH__;
#else
constexpr int kCompiledArch = 1000; // the host pass and the simulated device
#endif
/// Whether this compilation pass has T's mma.sync: the kernels of an older architecture are
/// empty, and the launchers never pick them there (attentionOnTensorCores).
template <typename T>
constexpr bool kCompiledForTensorCores = kCompiledArch >= MmaType<T>::kMinArch;

/// The body of a kernel compiled without its type's mma.sync: attentionOnTensorCores never
/// launches one, and a launch stops there rather than leave its outputs as they were.
__device__ __forceinline__ void stopWithoutTensorCores() {
#if defined(__CUDA_ARCH__)
  __trap();
#endif
}

/// Calls launch(std::integral_constant<int, D>{}) with D the head dimension rounded up to a
/// multiple of 32 (whole k16 steps and 16-byte tile rows; 80 takes 96, not 128).
template <typename Launch> void dispatchMmaHeadDim(int64_t headDim, const Launch &launch) {
  if (headDim <= 64)
    dispatchHeadDim(headDim, launch);
  else if (headDim <= 96)
    launch(std::integral_constant<int, 96>{});
  else
    launch(std::integral_constant<int, 128>{});
}

/// All threads of the block: `rows` rows from `first` of head x into the shared `tile`, zeros
/// beyond seq and headDim; 16 bytes of a row a thread at a time (one access each where the
/// head dimension and the row's alignment allow).
template <int D, typename T, typename W>
__device__ void loadRows(HeadRows<const T> x, const Params &p, int64_t first, int rows, W *tile) {
  constexpr int kGroup = kVectorValues<T>, kGroupsPerRow = D / kGroup;
  static_assert(D % kGroup == 0, "a tile row is whole 16-byte groups");
  using Group = Vector<T, kGroup>; // its values are W's, so `tile` is written as W
  for (int e = threadIdx.x; e < rows * kGroupsPerRow; e += kThreads) {
    const int r = e / kGroupsPerRow, c = e % kGroupsPerRow * kGroup;
    const int64_t i = first + r;
    Group group{};
    if (i < p.seq && c < p.headDim) {
      const T *source = x.row(i) + c;
      if (c + kGroup <= p.headDim && asVector<kGroup>(source, kGroup))
        group = *reinterpret_cast<const Group *>(source);
      else
        for (int j = 0; j < kGroup && c + j < p.headDim; ++j)
          group.values[j] = *reinterpret_cast<const W *>(source + j);
    }
    *reinterpret_cast<Group *>(tile + r * kTileStride<D> + c) = group;
  }
}

/// A streamed tile of Keys keys in shared memory: their k and v rows, their mask bias and,
/// with causal, their mask words (visibleBias).
template <int D, int Keys, typename W> struct KeyTile {
  __align__(16) W keys[Keys * kTileStride<D>];
  __align__(16) W values[Keys * kTileStride<D>];
  float bias[Keys];
  int32_t words[Keys];

  /// All threads of the block: keys [first, first + Keys) of key/value head g of sequence b.
  template <typename T>
  __device__ void load(const T *k, const T *v, const int32_t *mask, const Params &p, int64_t b,
                       int64_t g, int64_t first) {
    loadRows<D>(p.keyRows(k, b, g), p, first, Keys, keys);
    loadRows<D>(p.keyRows(v, b, g), p, first, Keys, values);
    loadKeyBias<Keys>(mask, p, b, first, bias, words);
  }
};

/// The grid: a block per kBlockRows rows of each (head, sequence), of the query heads or of
/// the key/value heads (`heads`).
inline dim3 blockGrid(const Params &p, int64_t heads) {
  return dim3(unsigned((p.seq + kBlockRows - 1) / kBlockRows), unsigned(heads), unsigned(p.batch));
}

/// The row address lane `lane` gives ldmatrix for four 8 x 8 matrices of a shared tile, from
/// rows [row0, row0 + 16) and columns [column0, column0 + 16). With rowBlocksFirst their
/// order is (upper rows, left columns), (lower, left), (upper, right), (lower, right): the
/// A fragment of those rows and columns, or transposed, the B fragments of two 8-column
/// blocks. Otherwise (upper, left), (upper, right), (lower, left), (lower, right): the B
/// fragments of two 8-row blocks of a tile whose rows are the product's columns.
template <int D, typename W>
__device__ __forceinline__ const W *matrixRow(const W *tile, int row0, int column0,
                                              bool rowBlocksFirst) {
  const int lane = int(threadIdx.x % 32), matrix = lane / 8;
  const int rowBlock = rowBlocksFirst ? matrix % 2 : matrix / 2;
  const int columnBlock = rowBlocksFirst ? matrix / 2 : matrix % 2;
  return tile + (row0 + 8 * rowBlock + lane % 8) * kTileStride<D> + column0 + 8 * columnBlock;
}

/// The calling warp's 16 rows from `row0` of a shared tile as matrix_a fragments.
template <int D, typename W>
__device__ __forceinline__ void loadOperandRows(const W *tile, int row0, uint32_t (&a)[D / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    loadMatrixX4<false>(a[kk], matrixRow<D>(tile, row0, kk * 16, true));
}

/// s += a x^T: the warp's 16 rows against the N rows of a shared tile x.
template <int D, int N, typename W>
__device__ __forceinline__ void productWithRows(const uint32_t (&a)[D / 16][4], const W *tile,
                                                float (&s)[N / 8][4]) {
  static_assert(N % 16 == 0, "two 8-row blocks per load");
#pragma unroll
  for (int n = 0; n < N / 8; n += 2)
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t rows[4];
      loadMatrixX4<false>(rows, matrixRow<D>(tile, n * 8, kk * 16, false));
      mmaM16N8K16<W>(s[n], a[kk], {rows[0], rows[1]});
      mmaM16N8K16<W>(s[n + 1], a[kk], {rows[2], rows[3]});
    }
}

/// acc += w x: the warp's [16, N] weights (accumulators, rounded to W here) times the
/// [N, D] shared tile x.
template <int D, int N, typename W>
__device__ __forceinline__ void accumulateProduct(const float (&w)[N / 8][4], const W *tile,
                                                  float (&acc)[D / 8][4]) {
#pragma unroll
  for (int kk = 0; kk < N / 16; ++kk) {
    const float(&left)[4] = w[2 * kk], (&right)[4] = w[2 * kk + 1];
    const uint32_t a[4] = {packPair(W{}, left[0], left[1]), packPair(W{}, left[2], left[3]),
                           packPair(W{}, right[0], right[1]), packPair(W{}, right[2], right[3])};
#pragma unroll
    for (int n = 0; n < D / 8; n += 2) {
      uint32_t columns[4];
      loadMatrixX4<true>(columns, matrixRow<D>(tile, kk * 16, n * 8, true));
      mmaM16N8K16<W>(acc[n], a, {columns[0], columns[1]});
      mmaM16N8K16<W>(acc[n + 1], a, {columns[2], columns[3]});
    }
  }
}

/// Stores row r (0: g, 1: g + 8) of the warp's [16, D] results times `factor` as row `row`
/// of head x (dims below headDim); the caller skips rows past seq. A lane's two adjacent
/// values go as one 4-byte store where the head dimension is even (every head row, and so
/// every pair from an even dim, is then 4-byte aligned).
template <int D, typename T>
__device__ __forceinline__ void storeRow(const float (&acc)[D / 8][4], int r, float factor,
                                         HeadRows<T> x, const Params &p, int64_t row) {
  using W = typename MmaType<T>::Type;
  const int t = int(threadIdx.x % 4);
  T *target = x.row(row);
  const bool pairs = p.headDim % 2 == 0;
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    const int dim = n * 8 + 2 * t;
    const float low = acc[n][2 * r] * factor, high = acc[n][2 * r + 1] * factor;
    if (dim >= p.headDim)
      continue;
    if (pairs) {
      *reinterpret_cast<uint32_t *>(target + dim) = packPair(W{}, low, high);
    } else {
      storeFloat(target + dim, low);
      if (dim + 1 < p.headDim)
        storeFloat(target + dim + 1, high);
    }
  }
}

/// The two rows the calling lane holds results of: g and g + 8 of the warp's 16 from `first`.
struct LaneRows {
  int64_t row[2];
  __device__ explicit LaneRows(int64_t first) {
    const int64_t g = first + int(threadIdx.x / 32) * kWarpRows + int(threadIdx.x % 32) / 4;
    row[0] = g;
    row[1] = g + 8;
  }
};

/// The column of element e of accumulator n for the calling lane.
__device__ __forceinline__ int laneColumn(int n, int e) {
  return n * 8 + 2 * int(threadIdx.x % 4) + e % 2;
}

} // namespace bertc::cuda::attention::mma_tiles

namespace bertc::cuda::attention {

/// The fused attention on mma.sync: the forward in one pass over the keys, the backward's
/// dq, dk and dv from the row terms already in p.rowTerm.
template <typename T>
void mmaForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                const Params &p, cudaStream_t stream);
template <typename T>
void mmaBackward(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask, T *dq,
                 T *dk, T *dv, const Params &p, cudaStream_t stream);

} // namespace bertc::cuda::attention
