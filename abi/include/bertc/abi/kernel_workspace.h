// The memory the kernels need beyond the tensors of the step, defined once for the memory
// planner that reserves it and the kernels that use it (no CUDA here): the CPU attention's
// scratch; on the CUDA target the runtime's workspace (cuBLASLt's, the pointer-array GEMMs'
// arrays and the column sums' tickets), the attention backward's row term, the column sums'
// partial sums (bias and LayerNorm parameter gradients) and the optimizer's tables (the
// AdamW chunk table, which also places the 16-bit working copies, the gradient norm's
// partial sums and scalars). (LayerNorm's saved mean and rstd are [rows] fp32 each,
// cuda_kernels.h.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace bertc::cpu {

/// Scratch floats the CPU attention's forward and backward take at sequence length `seq`:
/// two [seq, seq] matrices, then one [seq] row that they no longer use (issue 13: dropping
/// it changes the planned offsets every plan test pins), then for grouped-query attention
/// (kv_heads < heads; groupedHeadDim its head dimension, else 0) the backward's fp32 dk and
/// dv of one key/value head, [seq, groupedHeadDim] each, summed over its group of query
/// heads before they are rounded once.
inline int64_t attentionScratchFloats(int64_t seq, int64_t groupedHeadDim = 0) {
  return 2 * seq * seq + seq + 2 * seq * groupedHeadDim;
}

} // namespace bertc::cpu

namespace bertc::cuda {

/// Device workspace bytes of the CUDA runtime, one arena slot: 32 MiB, the cuBLASLt
/// workspace NVIDIA recommends for Hopper (earlier GPUs need less). The memory plan reserves
/// exactly this much. Its last kColumnSumTickets unsigned ints are the column sums' tickets
/// (zeroed once, before the first step); LinearGemms keeps its pointer arrays in the 192 KiB
/// before them (cuda_gemm.h) and gives cuBLASLt the rest.
constexpr size_t kCudaWorkspaceBytes = size_t(32) << 20;

/// Tickets of the one-launch column sums (runtime/cuda/column_sums.cuh): one per block of a
/// row of its grid, which holds at most this many blocks (wider sums loop over their tiles).
constexpr int64_t kColumnSumTickets = 256;
constexpr size_t kColumnSumTicketsOffset =
    kCudaWorkspaceBytes - size_t(kColumnSumTickets) * sizeof(unsigned);

/// Largest head dimension (hidden / heads) the attention kernels take.
constexpr int64_t kMaxAttentionHeadDim = 128;
/// Largest head dimension the fused attention of 16-bit storage runs on tensor cores
/// (runtime/cuda/attention_mma.cuh); for fp32, its products are fp32 on CUDA cores.
constexpr int64_t kMaxTensorCoreAttentionHeadDim = 128;

/// fp32 values of the attention backward's row term: per query row of each head, dctx·ctx
/// (the forward's log-sum-exp, the other row statistic, is a planned activation).
inline int64_t attentionRowTermFloats(int64_t batch, int64_t heads, int64_t seq) {
  return batch * heads * seq;
}

/// The tensor-core attention (an attention op with head_chunk > 0) takes its heads
/// head_chunk at a time: per chunk, GEMMs batched over its heads and the batch, with
/// the chunk's [headChunk, batch, seq, seq] scores in a block of the kernel workspace,
/// head-major (head h of the chunk, sequence b: the [seq, seq] matrix at float offset
/// (h * batch + b) * seq * seq). The softmax overwrites each fp32 row in place with its
/// storage-type values from the row's first byte, so a block read as the storage type T
/// has a leading dimension of attentionPackedLd<T>(seq) elements.
inline int64_t attentionScoreBlockFloats(int64_t headChunk, int64_t batch, int64_t seq) {
  return headChunk * batch * seq * seq;
}

/// Leading dimension, in T elements, of a score block's rows rewritten as T in place.
template <typename T> constexpr int64_t attentionPackedLd(int64_t seq) {
  return seq * int64_t(sizeof(float) / sizeof(T));
}

/// Bytes of the tensor-core forward's workspace: one score block (the scores, then the
/// probabilities after dropout that the product with v reads). 0 for the fused kernel.
inline int64_t attentionForwardWorkspaceBytes(int64_t headChunk, int64_t batch, int64_t seq) {
  return attentionScoreBlockFloats(headChunk, batch, seq) * int64_t(sizeof(float));
}

/// 32-bit words of the fused attention backward's dropout mask: per query row i of each
/// head, one bit per key (bit j % 32 of word j / 32: whether dropout keeps probability
/// (i, j)), the row's words padded to a multiple of 32 keys, laid out [batch, heads,
/// word, row] so that a warp's rows reach the same word together. The key/value kernel
/// draws the mask and writes it; the query kernel, which runs after it, reads it instead
/// of drawing it again.
inline int64_t attentionKeepWords(int64_t batch, int64_t heads, int64_t seq) {
  return batch * heads * seq * ((seq + 31) / 32);
}

/// fp32 values of the tensor-core backward's dk (or dv) per query head of a chunk of
/// grouped-query attention, [headChunk, batch, seq, headDim] head-major as the score
/// blocks, which a kernel then sums over each group into the key/value head's gradient.
inline int64_t attentionGroupedGradFloats(int64_t headChunk, int64_t batch, int64_t seq,
                                          int64_t headDim) {
  return headChunk * batch * seq * headDim;
}

/// Bytes of the attention backward's workspace. The fused kernel (headChunk 0) takes the
/// row term, then with dropout its mask (attentionKeepWords); the tensor-core one, whose
/// row kernel sums each row's term itself, two score blocks, one after the other: the
/// recomputed scores (rewritten as the kept, rescaled probabilities P*Z that dv is made
/// from) and dctx v^T (rewritten as the scores' gradient dS that dq and dk are made from),
/// then for grouped-query attention (groupedHeadDim its head dimension, else 0) the chunk's
/// dk and dv per query head (attentionGroupedGradFloats each).
inline int64_t attentionBackwardWorkspaceBytes(int64_t headChunk, int64_t batch, int64_t heads,
                                               int64_t seq, bool dropout,
                                               int64_t groupedHeadDim = 0) {
  if (headChunk == 0)
    return (attentionRowTermFloats(batch, heads, seq) +
            (dropout ? attentionKeepWords(batch, heads, seq) : 0)) *
           int64_t(sizeof(float));
  return (2 * attentionScoreBlockFloats(headChunk, batch, seq) +
          2 * attentionGroupedGradFloats(headChunk, batch, seq, groupedHeadDim)) *
         int64_t(sizeof(float));
}

/// Rows one block of a column sum (the bias and LayerNorm parameter gradients) adds up before
/// the last block adds the slices' sums; at most kMaxColumnSumSlices slices.
constexpr int64_t kColumnSumSliceRows = 256;
constexpr int64_t kMaxColumnSumSlices = 64;

/// Row slices of a column sum over `rows` rows.
inline int64_t columnSumSlices(int64_t rows) {
  return std::clamp<int64_t>((rows + kColumnSumSliceRows - 1) / kColumnSumSliceRows, 1,
                             kMaxColumnSumSlices);
}

/// Scratch floats of `sums` column sums over [rows, cols]: each slice's partial sums, none
/// when the rows make one slice (its blocks then write the sums themselves).
inline int64_t columnSumsWorkspaceFloats(int64_t sums, int64_t rows, int64_t cols) {
  const int64_t slices = columnSumSlices(rows);
  return slices > 1 ? sums * slices * cols : 0;
}

/// Scratch floats biasBackward's column sum over dy [rows, out] takes.
inline int64_t biasBackwardWorkspaceFloats(int64_t rows, int64_t out) {
  return columnSumsWorkspaceFloats(1, rows, out);
}

/// Scratch floats layerNormBackward's column sums of dgamma and dbeta over [rows, cols] take
/// (beside the row statistics it reads).
inline int64_t layerNormBackwardWorkspaceFloats(int64_t rows, int64_t cols) {
  return columnSumsWorkspaceFloats(2, rows, cols);
}

/// Scratch doubles squaredNorm needs (its per-block partial sums).
constexpr int64_t kSquaredNormPartials = 1024;

/// One trainable parameter: where its fp32 values lie in the parameter region, where its
/// gradient and moments lie in the (parallel) gradient and moment regions, and whether
/// weight decay applies to it.
struct AdamWParameter {
  int64_t paramOffset;
  int64_t stateOffset;
  int64_t count;
  bool decay;
};

/// A piece of one parameter, at most kAdamWChunkElements long; one thread block updates it
/// and rewrites its piece of a 16-bit parameter's working copy, which lies at
/// workingOffset 16-bit values from the arena's start (-1: an fp32 parameter, which has none).
struct AdamWChunk {
  int64_t paramOffset;
  int64_t stateOffset;
  int64_t workingOffset;
  int32_t count;
  int32_t decay;
};
constexpr int64_t kAdamWChunkElements = 16384;

/// Chunks adamwChunks cuts a parameter of `count` values into.
inline int64_t adamwChunkCount(int64_t count) {
  return (count + kAdamWChunkElements - 1) / kAdamWChunkElements;
}

/// The optimizer's tables, one arena slot after the cuBLASLt workspace: the AdamW chunk
/// table, then kSquaredNormPartials doubles, the squared gradient norm (float) and fp16's
/// overflow flag (int). Offsets are from the slot's start.
struct OptimizerTables {
  size_t partialsOffset;
  size_t squaredNormOffset;
  size_t nonFiniteOffset;
  size_t bytes;
};
static_assert(sizeof(AdamWChunk) % alignof(double) == 0,
              "the partial sums after the chunk table must stay aligned");
inline OptimizerTables optimizerTables(int64_t chunkCount) {
  size_t partials = size_t(chunkCount) * sizeof(AdamWChunk);
  size_t squaredNorm = partials + size_t(kSquaredNormPartials) * sizeof(double);
  size_t nonFinite = squaredNorm + sizeof(float);
  return {partials, squaredNorm, nonFinite, nonFinite + sizeof(int)};
}

/// Splits the parameters into chunks, in order: the table adamwUpdate takes (built once; its device
/// copy is sizeof(AdamWChunk) bytes per chunk). workingOffsets[i] is parameter i's 16-bit working
/// copy, in 16-bit values from the arena's start, or -1 for an fp32 parameter.
inline std::vector<AdamWChunk> adamwChunks(const std::vector<AdamWParameter> &parameters,
                                           const std::vector<int64_t> &workingOffsets) {
  std::vector<AdamWChunk> chunks;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const AdamWParameter &parameter = parameters[i];
    for (int64_t begin = 0; begin < parameter.count; begin += kAdamWChunkElements)
      chunks.push_back({parameter.paramOffset + begin, parameter.stateOffset + begin,
                        workingOffsets[i] < 0 ? -1 : workingOffsets[i] + begin,
                        int32_t(std::min(kAdamWChunkElements, parameter.count - begin)),
                        parameter.decay ? 1 : 0});
  }
  return chunks;
}

} // namespace bertc::cuda
