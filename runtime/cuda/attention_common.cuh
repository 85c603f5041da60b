// Internal to the attention kernels (the fused attention_forward.cu and attention_backward.cu,
// their tensor-core twins attention_mma_*.cu, and the chunked attention_chunked_*.cu): the
// thread layout, tile loads, slice arithmetic, scores, probabilities and dropout bits they
// share.
//
// Layout. A head row (one token's headDim values of one head) is split into slices of
// kDimsPerThread dims, one per thread: the kLanesPerRow = D / kDimsPerThread adjacent lanes
// of a warp that share a row each hold one slice in registers, and combine partial dot
// products with a butterfly shuffle (identical result in every lane). D, the head dimension
// rounded up to 32, 64 or 128, is a template parameter so the slices stay in registers;
// dims beyond the real headDim are zero. Rows of the other operand stream through shared
// memory kTile at a time, each slice padded by 4 floats so the lanes of one row, reading
// the same element of different slices, hit different banks. The products run in fp32 on
// CUDA cores: fp32 storage, a head dimension over 64, or a GPU without the storage type's
// mma.sync (16-bit storage otherwise runs attention_mma.cuh's kernels).
#pragma once

#include "bertc/runtime/attention_heads.h"
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "warp_reduce.cuh"

#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace bertc::cuda::attention {

constexpr int kThreads = 128;
constexpr int kDimsPerThread = 32;
/// Rows of a streamed tile; as keys, one word of the backward's dropout mask
/// (storedKeepBits).
constexpr int kTile = 32;
constexpr int kSliceFloats = kDimsPerThread + 4;

template <int D> struct HeadLayout {
  static constexpr int kLanesPerRow = D / kDimsPerThread;
  /// Rows (queries or keys) a block owns.
  static constexpr int kRowsPerBlock = kThreads / kLanesPerRow;
  /// Floats of one row in a shared tile.
  static constexpr int kRowFloats = kLanesPerRow * kSliceFloats;
};

/// One head of one sequence of a [batch, seq, heads * headDim] tensor: its token i's
/// headDim values at row(i).
template <typename T> struct HeadRows {
  T *data;
  int64_t ld;

  __device__ T *row(int64_t i) const { return data + i * ld; }
};

/// The shape of one attention call, its dropout and where the backward's row statistics live.
/// The query-shaped tensors (q, ctx, dctx, dq) are [batch, seq, hidden] with `heads` heads,
/// the key-shaped ones (k, v, dk, dv) [batch, seq, kvHeads * headDim]; query head h reads
/// key/value head h / group().
struct Params {
  int64_t batch, seq, hidden, heads, headDim, kvHeads;
  /// The document-masked causal mask (attention_heads.h).
  bool causal;
  float scale; ///< 1 / sqrt(headDim)
  float dropoutRate;
  float keptScale; ///< 1 / (1 - dropoutRate)
  DropoutKey key;
  const float *lse; ///< [batch, heads, seq]: the forward's log-sum-exp (backward)
  float *rowTerm;   ///< [batch, heads, seq]: dctx · ctx, the backward's row term
  /// The fused backward's dropout mask (attentionKeepWords; null without dropout): the
  /// key/value kernel writes it, the query kernel reads it.
  uint32_t *keepWords;

  __host__ __device__ int64_t kvHidden() const { return kvHeads * headDim; }
  /// Query heads per key/value head.
  __host__ __device__ int64_t group() const { return heads / kvHeads; }
  /// Offset of head h of token i of sequence b in a query-shaped tensor.
  __device__ int64_t tokenOffset(int64_t b, int64_t i, int64_t h) const {
    return (b * seq + i) * hidden + h * headDim;
  }
  /// Offset of key/value head g of token i of sequence b in a key-shaped tensor.
  __device__ int64_t kvTokenOffset(int64_t b, int64_t i, int64_t g) const {
    return (b * seq + i) * kvHidden() + g * headDim;
  }
  /// Head h of sequence b of a query-shaped tensor.
  template <typename T> __device__ HeadRows<T> queryRows(T *x, int64_t b, int64_t h) const {
    return {x + tokenOffset(b, 0, h), hidden};
  }
  /// Key/value head g of sequence b of a key-shaped tensor.
  template <typename T> __device__ HeadRows<T> keyRows(T *x, int64_t b, int64_t g) const {
    return {x + kvTokenOffset(b, 0, g), kvHidden()};
  }
  /// The keys [0, keyEnd) that the queries before queryEnd reach: all, or with causal those
  /// before queryEnd.
  __device__ int64_t keyEnd(int64_t queryEnd) const {
    return causal && queryEnd < seq ? queryEnd : seq;
  }
  /// The first query tile (of `tile` rows) that reaches key firstKey: 0, or with causal the
  /// tile that holds it.
  __device__ int64_t firstQueryTile(int64_t firstKey, int64_t tile) const {
    return causal ? firstKey / tile * tile : 0;
  }
  /// The keys query row i reaches: seq, or with causal i + 1.
  __device__ int64_t reach(int64_t i) const { return causal ? i + 1 : seq; }
  /// Index of row i of head h of sequence b in the statistics.
  __device__ int64_t statIndex(int64_t b, int64_t h, int64_t i) const {
    return (b * heads + h) * seq + i;
  }
  /// Index of the mask word that holds keys j .. j + 31 (j a multiple of 32) of query row i
  /// of head h of sequence b. Word-major: the same word of consecutive rows is adjacent, so
  /// a warp stores or loads its rows' words in one transaction.
  __device__ int64_t keepWordIndex(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return ((b * heads + h) * ((seq + 31) / 32) + j / 32) * seq + i;
  }
  /// Dropout index of probability (i, j) of head h within its batch row (as the CPU twin).
  __device__ uint64_t dropoutIndex(int64_t h, int64_t i, int64_t j) const {
    return attentionDropoutIndex(h, i, j);
  }
};

/// Checks the shape. The backward reads the forward's `lse` and keeps its row term in
/// `rowTerm` (attentionRowTermFloats); the forward has neither (null).
inline Params makeParams(int64_t batch, int64_t seq, int64_t hidden, const AttentionHeads &heads,
                         float dropoutRate, const DropoutKey &key, const float *lse,
                         float *rowTerm) {
  const int64_t h = heads.heads;
  if (h <= 0 || hidden % h != 0 || hidden / h > kMaxAttentionHeadDim)
    throw std::invalid_argument("attention: hidden " + std::to_string(hidden) + " over " +
                                std::to_string(h) + " heads needs a head dimension of at most " +
                                std::to_string(kMaxAttentionHeadDim));
  if (heads.kvHeads <= 0 || h % heads.kvHeads != 0)
    throw std::invalid_argument("attention: " + std::to_string(heads.kvHeads) +
                                " key/value heads do not divide the " + std::to_string(h) +
                                " heads");
  if (batch > 65535) // the grid's z dimension
    throw std::invalid_argument("attention: at most 65535 sequences per call");
  if (seq > kAttentionDropoutSeq || h > kAttentionDropoutHeads)
    throw std::invalid_argument("attention: at most " + std::to_string(kAttentionDropoutSeq) +
                                " tokens and " + std::to_string(kAttentionDropoutHeads) +
                                " heads, whose dropout masks bertc keys");
  Params p{};
  p.batch = batch;
  p.seq = seq;
  p.hidden = hidden;
  p.heads = h;
  p.headDim = hidden / h;
  p.kvHeads = heads.kvHeads;
  p.causal = heads.causal;
  p.scale = 1.0f / std::sqrt(float(p.headDim));
  p.dropoutRate = dropoutRate;
  p.keptScale = dropoutRate > 0.0f ? 1.0f / (1.0f - dropoutRate) : 1.0f;
  p.key = key;
  p.lse = lse;
  p.rowTerm = rowTerm;
  p.keepWords = nullptr;
  return p;
}

/// Calls launch(std::integral_constant<int, D>{}) with D the head dimension rounded up to
/// the next instantiated size.
template <typename Launch> void dispatchHeadDim(int64_t headDim, const Launch &launch) {
  if (headDim <= 32)
    launch(std::integral_constant<int, 32>{});
  else if (headDim <= 64)
    launch(std::integral_constant<int, 64>{});
  else
    launch(std::integral_constant<int, 128>{});
}

/// The grid of a kernel whose blocks own kRowsPerBlock rows of one (head, sequence): of the
/// query heads, or of the key/value heads (`heads`).
template <int D> dim3 rowGrid(const Params &p, int64_t heads) {
  constexpr int rows = HeadLayout<D>::kRowsPerBlock;
  return dim3(unsigned((p.seq + rows - 1) / rows), unsigned(heads), unsigned(p.batch));
}

/// The thread's slice (`part`) of row i of head x; zeros beyond headDim or when the row does
/// not exist.
template <typename T>
__device__ void loadSlice(HeadRows<const T> x, const Params &p, int64_t i, int part, bool exists,
                          float (&slice)[kDimsPerThread]) {
  const int64_t begin = part * kDimsPerThread;
  const T *row = exists ? x.row(i) : x.data;
#pragma unroll
  for (int c = 0; c < kDimsPerThread; ++c)
    slice[c] = exists && begin + c < p.headDim ? loadFloat(row + begin + c) : 0.0f;
}

/// Stores the thread's slice of row i of head x (the dims below headDim).
template <typename T>
__device__ void storeSlice(HeadRows<T> x, const Params &p, int64_t i, int part,
                           const float (&slice)[kDimsPerThread], float factor) {
  const int64_t begin = part * kDimsPerThread;
  T *row = x.row(i);
#pragma unroll
  for (int c = 0; c < kDimsPerThread; ++c)
    if (begin + c < p.headDim)
      storeFloat(row + begin + c, slice[c] * factor);
}

/// All threads of the block: rows [first, first + kTile) of head x into the shared `tile`
/// (kTile rows of kRowFloats), zeros beyond seq and headDim. Consecutive threads read
/// consecutive dims of a row, so the loads coalesce.
template <int D, typename T>
__device__ void loadTile(HeadRows<const T> x, const Params &p, int64_t first, float *tile) {
  for (int e = threadIdx.x; e < kTile * D; e += kThreads) {
    const int r = e / D, c = e % D;
    const int64_t i = first + r;
    const float value = i < p.seq && c < p.headDim ? loadFloat(x.row(i) + c) : 0.0f;
    tile[r * HeadLayout<D>::kRowFloats + (c / kDimsPerThread) * kSliceFloats + c % kDimsPerThread] =
        value;
  }
}

/// The slice `part` of row r of a shared tile.
template <int D> __device__ const float *tileSlice(const float *tile, int r, int part) {
  return tile + r * HeadLayout<D>::kRowFloats + part * kSliceFloats;
}

/// Partial dot product of a register slice with a shared slice (four independent sums, so
/// the multiply-adds overlap; 16-byte shared loads).
__device__ __forceinline__ float dotSlice(const float (&a)[kDimsPerThread], const float *b) {
  float sums[4] = {};
#pragma unroll
  for (int c = 0; c < kDimsPerThread; c += 4) {
    const float4 b4 = *reinterpret_cast<const float4 *>(b + c);
    sums[0] += a[c] * b4.x;
    sums[1] += a[c + 1] * b4.y;
    sums[2] += a[c + 2] * b4.z;
    sums[3] += a[c + 3] * b4.w;
  }
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

/// acc += alpha * b, b a shared slice.
__device__ __forceinline__ void axpySlice(float (&acc)[kDimsPerThread], float alpha,
                                          const float *b) {
#pragma unroll
  for (int c = 0; c < kDimsPerThread; c += 4) {
    const float4 b4 = *reinterpret_cast<const float4 *>(b + c);
    acc[c] += alpha * b4.x;
    acc[c + 1] += alpha * b4.y;
    acc[c + 2] += alpha * b4.z;
    acc[c + 3] += alpha * b4.w;
  }
}

/// The sum of `partial` over the kLanesPerRow lanes of one row.
template <int D> __device__ __forceinline__ float rowSum(float partial) {
  return laneGroupSum<HeadLayout<D>::kLanesPerRow>(partial);
}

/// The backward's row term dctx_i · ctx_i of the head row at `offset`, summed by the calling
/// warp (lane c takes dims c, c + 32, ...; adjacent lanes read adjacent values), in every lane.
template <typename T>
__device__ float headRowTerm(const T *dctx, const T *ctx, int64_t offset, int64_t headDim) {
  float term = 0.0f;
  for (int64_t c = threadIdx.x % 32; c < headDim; c += 32)
    term += loadFloat(dctx + offset + c) * loadFloat(ctx + offset + c);
  return warpSum(term);
}

/// A scaled, masked score, computed the same way (one rounding) in every kernel, so the
/// backward's recomputed probabilities match the forward's statistics.
__device__ __forceinline__ float maskedScore(float dot, float scale, float maskBias) {
  return __fmaf_rn(dot, scale, maskBias);
}

/// The forward's probability of a score from its row's log-sum-exp: exp(score - lse), or for
/// a row with every key masked, whose scores are -FLT_MAX on the `reach` keys it reaches and
/// whose lse (-FLT_MAX + log reach) rounds to -FLT_MAX, 1 / reach on those and 0 on a key it
/// does not reach (a causal row's later key, score -inf).
__device__ __forceinline__ float probabilityFromLse(float score, float lse, int64_t reach) {
  if (lse == -FLT_MAX)
    return score == -INFINITY ? 0.0f : 1.0f / float(reach);
  return expf(score - lse);
}

/// The additive mask of a key whose mask word is `word`: -FLT_MAX (torch.finfo(float32).min)
/// where it is 0.
__device__ __forceinline__ float maskBias(int32_t word) { return word == 0 ? -FLT_MAX : 0.0f; }

/// The additive mask of key j of sequence b (maskBias of mask[b, j]).
__device__ __forceinline__ float keyMaskBias(const int32_t *mask, const Params &p, int64_t b,
                                             int64_t j) {
  return maskBias(mask[b * p.seq + j]);
}

/// The additive mask of key j for query i, from the key's own (`keyBias`: maskBias, or -inf
/// past seq) and, with causal, the mask words (document ids) of both: -inf for a later key
/// (j > i), which the query never reaches, and -FLT_MAX for another document's.
__device__ __forceinline__ float visibleBias(const Params &p, float keyBias, int32_t keyWord,
                                             int32_t queryWord, int64_t i, int64_t j) {
  if (!p.causal)
    return keyBias;
  if (j > i)
    return -INFINITY;
  return keyWord == queryWord ? keyBias : -FLT_MAX;
}

/// Token i's mask word (its document) where the causal mask needs it: 0 otherwise, or past
/// seq.
__device__ __forceinline__ int32_t documentWord(const int32_t *mask, const Params &p, int64_t b,
                                                int64_t i) {
  return p.causal && i < p.seq ? mask[b * p.seq + i] : 0;
}

/// The additive mask of the Keys keys from `first` (-inf past seq) into `bias`, and their
/// mask words (0 past seq) into `words`, which visibleBias reads with causal.
template <int Keys>
__device__ __forceinline__ void loadKeyBias(const int32_t *mask, const Params &p, int64_t b,
                                            int64_t first, float *bias, int32_t *words) {
  static_assert(Keys <= kThreads, "a thread a key");
  if (threadIdx.x < Keys) {
    const int64_t j = first + threadIdx.x;
    const int32_t word = j < p.seq ? mask[b * p.seq + j] : 0;
    bias[threadIdx.x] = j < p.seq ? maskBias(word) : -INFINITY;
    words[threadIdx.x] = word;
  }
}

/// Bit t (t < count <= 32) says whether dropout keeps the probability with index
/// firstIndex + t in batch row b. One Philox call decides a group of four consecutive
/// indices (dropoutKeepGroup); the `Lanes` adjacent lanes of a row (a power of two up to a
/// warp) share the groups the range touches (lane `part` draws groups part, part + Lanes,
/// ...) and merge their bits. All bits are set without dropout.
template <int Lanes>
__device__ uint32_t keepBits(const Params &p, int64_t b, uint64_t firstIndex, int count, int part) {
  if (p.dropoutRate == 0.0f)
    return 0xffffffffu;
  const uint64_t firstGroup = firstIndex / kDropoutGroupSize;
  const uint64_t endGroup = (firstIndex + count + kDropoutGroupSize - 1) / kDropoutGroupSize;
  uint32_t bits = 0;
  for (uint64_t group = firstGroup + part; group < endGroup; group += Lanes) {
    const uint32_t kept = dropoutKeepGroup(p.key, b, group, p.dropoutRate);
    // Index 8 * group + k is bit 8 * group + k - firstIndex; the first group may begin
    // before the range.
    const int64_t shift = int64_t(group * kDropoutGroupSize) - int64_t(firstIndex);
    bits |= shift >= 0 ? kept << shift : kept >> -shift;
  }
#pragma unroll
  for (int offset = 1; offset < Lanes; offset *= 2)
    bits |= __shfl_xor_sync(0xffffffffu, bits, offset);
  return count < 32 ? bits & ((1u << count) - 1) : bits;
}

/// Whether dropout keeps probability (first + ii, j0 + jj) of head h of sequence b, in
/// keep[ii][jj] for the queries ii < kTile and the keys jj < Keys (the block's) below seq
/// (the other bytes are not written). For one query the block's keys have consecutive
/// indices, so one Philox call decides four of them. Every thread of the block takes part;
/// the bytes are there for all after the next barrier.
template <int Keys>
__device__ void fillKeepTile(const Params &p, int64_t b, int64_t h, int64_t first, int64_t j0,
                             uint8_t (*keep)[Keys]) {
  // A query's Keys indices may begin inside a group: one group more than they fill.
  constexpr int kGroupsPerQuery = Keys / kDropoutGroupSize + 1;
  const int64_t keys = p.seq - j0 < Keys ? p.seq - j0 : Keys;
  const int64_t queries = p.seq - first < kTile ? p.seq - first : kTile;
  for (int e = threadIdx.x; e < queries * kGroupsPerQuery; e += kThreads) {
    const int ii = e / kGroupsPerQuery;
    const uint64_t rowFirst = p.dropoutIndex(h, first + ii, j0);
    const uint64_t group = rowFirst / kDropoutGroupSize + uint64_t(e % kGroupsPerQuery);
    if (group * kDropoutGroupSize >= rowFirst + uint64_t(keys))
      continue;
    const uint32_t kept = dropoutKeepGroup(p.key, b, group, p.dropoutRate);
    for (int k = 0; k < kDropoutGroupSize; ++k) {
      const uint64_t index = group * kDropoutGroupSize + uint64_t(k);
      if (index >= rowFirst && index < rowFirst + uint64_t(keys))
        keep[ii][index - rowFirst] = uint8_t((kept >> k) & 1u);
    }
  }
}

/// The dropout factor of bit t: keptScale when kept, 0 when dropped.
__device__ __forceinline__ float dropoutFactor(const Params &p, uint32_t bits, int t) {
  return (bits >> t) & 1u ? p.keptScale : 0.0f;
}

/// Every thread of the block, after the barrier that follows fillKeepTile<Keys>: stores the
/// tile's mask in p.keepWords for the query kernel, one word per query and 32 of the
/// block's keys from j0 (Keys and j0 multiples of 32; keys past seq get 0 bits). A warp
/// takes a word: a ballot per query packs that query's word, lane ii keeps query ii's, and
/// the lanes store the tile's words together (adjacent, keepWordIndex).
template <int Keys>
__device__ void storeKeepWords(const Params &p, int64_t b, int64_t h, int64_t first, int64_t j0,
                               const uint8_t (*keep)[Keys]) {
  static_assert(Keys % 32 == 0, "a block's keys fill whole mask words");
  static_assert(kTile == 32, "a lane keeps the word of one query of the tile");
  const int lane = int(threadIdx.x % 32);
  const int64_t queries = p.seq - first < kTile ? p.seq - first : kTile;
  // The words that hold keys below seq.
  const int64_t keys = p.seq - j0 < Keys ? p.seq - j0 : Keys;
  const int words = int((keys + 31) / 32);
  for (int w = int(threadIdx.x / 32); w < words; w += kThreads / 32) {
    const int64_t j = j0 + w * 32 + lane;
    uint32_t ownWord = 0;
    for (int ii = 0; ii < queries; ++ii) {
      const uint32_t bits = __ballot_sync(0xffffffffu, j < p.seq && keep[ii][w * 32 + lane]);
      if (lane == ii)
        ownWord = bits;
    }
    if (lane < queries)
      p.keepWords[p.keepWordIndex(b, h, first + lane, j0 + w * 32)] = ownWord;
  }
}

/// keepBits for query row i (0 where it does not exist) and the keys from `first` (a
/// multiple of 32), read from the mask the key/value kernel stored. One word is a whole
/// key tile of kTile (32), half of the tensor-core query kernel's.
__device__ __forceinline__ uint32_t storedKeepBits(const Params &p, int64_t b, int64_t h, int64_t i,
                                                   int64_t first) {
  if (p.keepWords == nullptr) // no dropout
    return 0xffffffffu;
  return i < p.seq ? p.keepWords[p.keepWordIndex(b, h, i, first)] : 0u;
}

} // namespace bertc::cuda::attention
