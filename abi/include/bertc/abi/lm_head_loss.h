// The LM head loss's scratch (bert.lm_head_loss and its gradient), defined once for the
// planner that reserves it and the kernels of both targets that use it: the logits of
// token_chunk tokens at a time, never of all tokens.
//   forward   [tokenChunk, vocab] fp32 logits, then one fp32 loss per token of the batch
//             (summed in token order once every chunk has run, so the loss does not depend
//             on the chunk size's order of summation);
//   backward  the same block: the recomputed logits, rewritten in place by each row's
//             gradient in the storage type T (row r at float offset r * vocab, so a block
//             read as T has a leading dimension of lmHeadPackedLd<T>(vocab) elements).
#pragma once

#include <algorithm>
#include <cstdint>

namespace bertc {

/// The bound on the default chunk's logits block: 256 MiB, 512 tokens of Llama 3's 128256
/// logits. The backward's weight-gradient GEMM is token_chunk deep and reads and writes the
/// fp32 [vocab, width] gradient once per chunk, so it is bound by memory below a few hundred
/// tokens; 512 keeps it near a GPU's balance of flops to bytes while the block stays a few
/// percent of the budgets that train such a model.
inline constexpr int64_t kLmHeadDefaultBlockBytes = int64_t(256) << 20;

/// The token_chunk -bertc-lower-to-target chooses by default: the largest power of two
/// whose [chunk, vocab] fp32 block is at most kLmHeadDefaultBlockBytes (at least 1), and
/// never more than the step's `tokens`.
inline int64_t defaultLmHeadTokenChunk(int64_t vocab, int64_t tokens) {
  int64_t chunk = 1;
  while (2 * chunk * vocab * int64_t(sizeof(float)) <= kLmHeadDefaultBlockBytes)
    chunk *= 2;
  return std::max<int64_t>(1, std::min(chunk, tokens));
}

/// fp32 values of one chunk's logits block.
inline int64_t lmHeadBlockFloats(int64_t tokenChunk, int64_t vocab) { return tokenChunk * vocab; }

/// Bytes of the forward's workspace: the block, then a loss per token.
inline int64_t lmHeadLossForwardWorkspaceBytes(int64_t tokenChunk, int64_t vocab, int64_t tokens) {
  return (lmHeadBlockFloats(tokenChunk, vocab) + tokens) * int64_t(sizeof(float));
}

/// Bytes of the backward's workspace: the block.
inline int64_t lmHeadLossBackwardWorkspaceBytes(int64_t tokenChunk, int64_t vocab) {
  return lmHeadBlockFloats(tokenChunk, vocab) * int64_t(sizeof(float));
}

/// Leading dimension, in T elements, of the backward's gradient rows rewritten as T in place.
template <typename T> constexpr int64_t lmHeadPackedLd(int64_t vocab) {
  return vocab * int64_t(sizeof(float) / sizeof(T));
}

} // namespace bertc
