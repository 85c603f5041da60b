// Internal to the tensor-core attention (cuda_chunked_attention.h), whose forward and
// backward are attention_chunked_forward.cu and attention_chunked_backward.cu: the row
// kernels' layout, the masked scores, the chunk's checks and its GEMMs' operands.
//
// Per chunk of headChunk heads, each product is one batched cuBLASLt GEMM over the chunk's
// heads and the batch (a group of sequences per head; in the backward, two products of one
// layout share a GEMM), the chunk's GEMMs listed so that one kernel fills all their pointer
// arrays (LinearGemms::listBatchedGemms), with the chunk's [seq, seq] matrices in score
// blocks of the workspace (abi/kernel_workspace.h); between the products, one row kernel
// over every row of the chunk does the softmax and dropout (forward) or the row term, P*Z
// and dS (backward), with the scores, mask bias, probabilities and dropout bits of the fused
// kernels (attention_common.cuh).
//
// Grouped-query heads: a chunk holds whole groups, and the products read each query head's
// key/value head in place (BatchedOperand::groupRepeat: consecutive groups of a GEMM share
// one key/value head's matrices); dk and dv of each query head go in fp32 to the workspace,
// and a kernel adds them up over each group in order and rounds once. Causal: the GEMMs
// compute every score, and the row kernels' mask gives the later keys probability 0.
//
// A row kernel gives each row a warp, and each lane four adjacent keys at a time (one
// dropout group's worth: keepBits<1> decides them with one Philox call, two where the row's
// indices do not start a group), so a sweep of the warp covers 128 keys. It rewrites the row's fp32
// values as T in place from the row's first byte: T value j overwrites fp32 values up to j only, so
// each sweep reads its fp32 values, syncs, then writes its T values over what this sweep or an
// earlier one has read.
#pragma once

#include "bertc/runtime/cuda_chunked_attention.h"

#include "attention_common.cuh"

#include <stdexcept>
#include <string>

namespace bertc::cuda::attention {

constexpr int kWarpSize = 32;
/// Rows of a row kernel's block, a warp each.
constexpr int kRowsPerRowBlock = 4;
constexpr int kRowThreads = kRowsPerRowBlock * kWarpSize;

/// Row `row` of a chunk's score block: query i of sequence b for head h (the chunk's head
/// row / (batch * seq), counted from firstHead).
struct BlockRow {
  int64_t b, h, i;
};

__device__ inline BlockRow blockRow(const Params &p, int64_t firstHead, int64_t row) {
  return {(row / p.seq) % p.batch, firstHead + row / (p.batch * p.seq), row % p.seq};
}

/// Keys a lane of a row kernel takes at a time, and keys a sweep of the warp covers.
constexpr int kLaneKeys = kDropoutGroupSize;
constexpr int kSweepKeys = kWarpSize * kLaneKeys;

/// The keys of a lane's sweep that the row has, from its first key `first`: kLaneKeys, fewer
/// at the row's end, 0 past it.
__device__ inline int laneKeys(const Params &p, int64_t first) {
  return first < p.seq ? int(p.seq - first < kLaneKeys ? p.seq - first : kLaneKeys) : 0;
}

/// The masked, scaled score of key j from its raw q·k in a row (query `at.i` of sequence
/// `at.b`, whose mask word is `word`: documentWord).
__device__ inline float keyScore(const float *raw, const int32_t *mask, const Params &p,
                                 BlockRow at, int32_t word, int64_t j) {
  const float bias =
      visibleBias(p, keyMaskBias(mask, p, at.b, j), mask[at.b * p.seq + j], word, at.i, j);
  return maskedScore(raw[j], p.scale, bias);
}

/// The fused kernels' checks and parameters (no row term: the backward's row kernel sums
/// it), and the chunk size's range: whole key/value groups.
inline Params chunkedParams(int64_t headChunk, int64_t batch, int64_t seq, int64_t hidden,
                            const AttentionHeads &heads, float dropoutRate, const DropoutKey &key,
                            const float *lse) {
  const Params p = makeParams(batch, seq, hidden, heads, dropoutRate, key, lse, nullptr);
  if (headChunk < 1 || headChunk > p.heads || headChunk % p.group() != 0)
    throw std::invalid_argument("attention: head_chunk " + std::to_string(headChunk) +
                                " is not a multiple of " + std::to_string(p.group()) +
                                " (a key/value group) between 1 and the " +
                                std::to_string(p.heads) + " heads");
  return p;
}

/// Query heads firstHead, firstHead + 1, ... of a query-shaped tensor: per head (a group),
/// `batch` [seq, headDim] matrices.
template <typename T>
BatchedOperand<T> headOperand(const T *x, const Params &p, int64_t firstHead, bool transposed) {
  return {x + firstHead * p.headDim, p.hidden, p.seq * p.hidden, transposed, p.headDim};
}
template <typename T> BatchedOutput<T> headOutput(T *x, const Params &p, int64_t firstHead) {
  return {x + firstHead * p.headDim, p.hidden, p.seq * p.hidden, p.headDim};
}
/// The key/value heads of query heads firstHead, firstHead + 1, ... (a multiple of the group)
/// in a key-shaped tensor, each read in place by its group's query heads.
template <typename T>
BatchedOperand<T> keyHeadOperand(const T *x, const Params &p, int64_t firstHead, bool transposed) {
  return {x + firstHead / p.group() * p.headDim,
          p.kvHidden(),
          p.seq * p.kvHidden(),
          transposed,
          p.headDim,
          p.group()};
}
/// A score block: per head of the chunk, `batch` fp32 [seq, seq] matrices ...
inline BatchedOutput<float> blockOutput(float *block, const Params &p) {
  return {block, p.seq, p.seq * p.seq, p.batch * p.seq * p.seq};
}
/// ... and the same after a row kernel rewrote their rows as T.
template <typename T>
BatchedOperand<T> packedOperand(const float *block, const Params &p, bool transposed) {
  const int64_t ld = attentionPackedLd<T>(p.seq);
  return {reinterpret_cast<const T *>(block), ld, ld * p.seq, transposed, ld * p.seq * p.batch};
}

inline unsigned rowBlocks(int64_t rows) {
  return unsigned((rows + kRowsPerRowBlock - 1) / kRowsPerRowBlock);
}

} // namespace bertc::cuda::attention
