// The heads of one attention call and which keys its queries see: bert.attention's `heads`,
// `kv_heads` and `causal`, as the CPU and CUDA attention kernels take them. A plain head
// count converts to it (every query head its own key/value head, no causal mask), so a
// BERT trainer's calls pass the heads alone.
#pragma once

#include <cstdint>

namespace bertc {

/// `heads` query heads over `kvHeads` key/value heads (kvHeads divides heads): query head h
/// reads key/value head h / (heads / kvHeads), transformers' repeat_kv order. With `causal`,
/// key j is visible to query i iff j <= i, mask[j] != 0 and mask[j] == mask[i] (the mask's
/// values are document ids); without, iff mask[j] != 0.
struct AttentionHeads {
  int64_t heads, kvHeads;
  bool causal;

  /// Implicit, so that a head count is a BERT attention's heads.
  constexpr AttentionHeads(int64_t headCount)
      : heads(headCount), kvHeads(headCount), causal(false) {}
  constexpr AttentionHeads(int64_t headCount, int64_t kvHeadCount, bool isCausal)
      : heads(headCount), kvHeads(kvHeadCount), causal(isCausal) {}

  /// Query heads per key/value head.
  constexpr int64_t group() const { return heads / kvHeads; }
  /// Whether some key/value head serves several query heads.
  constexpr bool grouped() const { return kvHeads != heads; }
};

} // namespace bertc
