// Internal to the CPU kernels: dropout for a span of consecutive elements of one row
// (counter_rng.h's dropoutKeepGroup, eight decisions per Philox call), drawn a block of
// groups at a time by a loop the compiler vectorises and handed out as that block's factors
// (1 / (1 - rate) where an element is kept, 0 where it is dropped), so that the loops that
// apply them have no branch per element and vectorise too.
#pragma once

#include "bertc/runtime/counter_rng.h"

#include <algorithm>
#include <cstdint>

namespace bertc::cpu {

/// Philox calls drawn together before their decisions are used.
constexpr int64_t kDropoutDrawBlock = 64;

/// Calls visit(j0, factor, n) for consecutive spans [j0, j0 + n) that cover [0, count), in
/// order: factor[t] is what dropout at `rate` multiplies element first + j0 + t of the
/// micro-batch's row `row` by, 1 / (1 - rate) if kept, else 0.
template <typename VisitSpan>
void forEachDropoutFactorSpan(const DropoutKey &key, int64_t row, uint64_t first, int64_t count,
                              float rate, const VisitSpan &visit) {
  constexpr uint64_t group = kDropoutGroupSize;
  const float keptScale = 1.0f / (1.0f - rate);
  const uint64_t end = first + uint64_t(count), endGroup = (end + group - 1) / group;
  uint32_t kept[kDropoutDrawBlock];
  float factors[kDropoutDrawBlock * group];
  for (uint64_t firstGroup = first / group; firstGroup < endGroup;
       firstGroup += kDropoutDrawBlock) {
    const int64_t groups = int64_t(std::min<uint64_t>(kDropoutDrawBlock, endGroup - firstGroup));
    for (int64_t g = 0; g < groups; ++g)
      kept[g] = dropoutKeepGroup(key, row, firstGroup + uint64_t(g), rate);
    for (int64_t e = 0; e < groups * int64_t(group); ++e)
      factors[e] = (kept[e / int64_t(group)] >> (e % int64_t(group))) & 1u ? keptScale : 0.0f;
    const uint64_t blockFirst = firstGroup * group;
    const uint64_t begin = std::max(first, blockFirst);
    const uint64_t stop = std::min(end, blockFirst + uint64_t(groups) * group);
    visit(int64_t(begin - first), factors + (begin - blockFirst), int64_t(stop - begin));
  }
}

} // namespace bertc::cpu
