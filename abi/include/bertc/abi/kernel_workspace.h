// The memory the kernels need beyond the tensors of the step, defined once for the memory
// planner that reserves it and the kernels that use it (no CUDA here): the CPU attention's
// scratch; on the CUDA target the cuBLASLt workspace, the attention backward's row term,
// the column sums' partial sums (bias and LayerNorm parameter gradients) and the optimizer's
// tables (the AdamW chunk table, which also places the 16-bit working copies, the gradient
// norm's partial sums and scalars). (LayerNorm's
// saved mean and rstd are [rows] fp32 each, cuda_kernels.h.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace bertc::cpu {

/// Scratch floats the CPU attention's forward and backward take at sequence length `seq`:
/// two [seq, seq] matrices, then one [seq] row that they no longer use (issue 13: dropping
/// it changes the planned offsets every plan test pins).
inline int64_t attentionScratchFloats(int64_t seq) { return 2 * seq * seq + seq; }

} // namespace bertc::cpu

namespace bertc::cuda {

/// Device workspace bytes every cuBLASLt call may use: 32 MiB, what NVIDIA recommends for
/// Hopper (earlier GPUs need less). The memory plan reserves exactly this much.
constexpr size_t kCublasLtWorkspaceBytes = size_t(32) << 20;

/// Largest head dimension (hidden / heads) the attention kernels take.
constexpr int64_t kMaxAttentionHeadDim = 128;

/// fp32 values of the attention backward's row term: per query row of each head, dctx·ctx
/// (the forward's log-sum-exp, the other row statistic, is a planned activation).
inline int64_t attentionRowTermFloats(int64_t batch, int64_t heads, int64_t seq) {
  return batch * heads * seq;
}

/// Rows one block of a two-pass column sum (the bias and LayerNorm parameter gradients) adds
/// up before the second pass adds the blocks' sums; at most kMaxColumnSumSlices slices.
constexpr int64_t kColumnSumSliceRows = 256;
constexpr int64_t kMaxColumnSumSlices = 64;

/// Row slices of a two-pass column sum over `rows` rows.
inline int64_t columnSumSlices(int64_t rows) {
  return std::clamp<int64_t>((rows + kColumnSumSliceRows - 1) / kColumnSumSliceRows, 1,
                             kMaxColumnSumSlices);
}

/// Scratch floats of `sums` two-pass column sums over [rows, cols]: each slice's partial
/// sums, none when the rows make one slice (the first pass then writes the sums itself).
inline int64_t columnSumsWorkspaceFloats(int64_t sums, int64_t rows, int64_t cols) {
  const int64_t slices = columnSumSlices(rows);
  return slices > 1 ? sums * slices * cols : 0;
}

/// Scratch floats biasBackward's two-pass sum over dy [rows, out] takes.
inline int64_t biasBackwardWorkspaceFloats(int64_t rows, int64_t out) {
  return columnSumsWorkspaceFloats(1, rows, out);
}

/// Scratch floats layerNormBackward's two-pass sums of dgamma and dbeta over [rows, cols]
/// take (beside the row statistics it reads).
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

/// A piece of one parameter, at most kAdamWChunkElements long; one thread block updates it,
/// and one rewrites its piece of a 16-bit parameter's working copy, which lies at
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

/// Splits the parameters into chunks, in order: the table adamwUpdate and convertMasters
/// take (built once; its device copy is sizeof(AdamWChunk) bytes per chunk).
/// workingOffsets[i] is parameter i's 16-bit working copy, in 16-bit values from the arena's
/// start, or -1 for an fp32 parameter.
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
