// Internal to the CPU kernels: dropout decisions for a span of consecutive elements of one
// row (counter_rng.h's dropoutKeepGroup, four per Philox call), drawn a block of groups at a
// time by a loop the compiler vectorises, then handed out one element at a time.
#pragma once

#include "bertc/runtime/counter_rng.h"

#include <algorithm>
#include <cstdint>

namespace bertc::cpu {

/// Philox calls drawn together before their decisions are used.
constexpr int64_t kDropoutDrawBlock = 64;

/// Calls visit(j, keep) for j in [0, count) in order, keep being whether dropout keeps element
/// first + j of the micro-batch's row `row` at `rate`.
template <typename Visit>
void forEachDropoutDecision(const DropoutKey &key, int64_t row, uint64_t first, int64_t count,
                            float rate, const Visit &visit) {
  constexpr uint64_t group = kDropoutGroupSize;
  const uint64_t end = first + uint64_t(count), endGroup = (end + group - 1) / group;
  uint32_t kept[kDropoutDrawBlock];
  for (uint64_t firstGroup = first / group; firstGroup < endGroup;
       firstGroup += kDropoutDrawBlock) {
    const int64_t groups = int64_t(std::min<uint64_t>(kDropoutDrawBlock, endGroup - firstGroup));
    for (int64_t g = 0; g < groups; ++g)
      kept[g] = dropoutKeepGroup(key, row, firstGroup + uint64_t(g), rate);
    const uint64_t begin = std::max(first, firstGroup * group);
    const uint64_t stop = std::min(end, (firstGroup + uint64_t(groups)) * group);
    for (uint64_t i = begin; i < stop; ++i)
      visit(int64_t(i - first), ((kept[i / group - firstGroup] >> (i % group)) & 1u) != 0);
  }
}

} // namespace bertc::cpu
