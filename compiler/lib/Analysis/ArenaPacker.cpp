//===- ArenaPacker.cpp - greedy-by-size interval packing ------------------===//
//
// 1. Order the buffers by size, largest first (ties: earlier begin first, so the
//    result does not depend on the input order of equal buffers).
// 2. For each buffer, collect the placed buffers alive at the same time, sorted by
//    offset, and take the first gap (from offset 0) that holds it, aligned.
// Large buffers placed first fix the arena's shape; small ones fill the holes.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/ArenaPacker.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace bertc {

ArenaPacking packIntervals(const std::vector<LiveInterval> &intervals, int64_t alignment) {
  std::vector<size_t> order(intervals.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (intervals[a].bytes != intervals[b].bytes)
      return intervals[a].bytes > intervals[b].bytes;
    return intervals[a].begin < intervals[b].begin;
  });

  ArenaPacking packing;
  packing.offsets.assign(intervals.size(), 0);
  std::vector<size_t> placed;
  for (size_t index : order) {
    const LiveInterval &buffer = intervals[index];
    std::vector<std::pair<int64_t, int64_t>> busy; // [offset, end) of conflicting buffers
    for (size_t other : placed)
      if (overlapsInTime(buffer, intervals[other]))
        busy.push_back({packing.offsets[other], packing.offsets[other] + intervals[other].bytes});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [start, end] : busy) {
      if (offset + buffer.bytes <= start)
        break;
      offset = std::max(offset, alignTo(end, alignment));
    }
    packing.offsets[index] = offset;
    packing.bytes = std::max(packing.bytes, offset + buffer.bytes);
    placed.push_back(index);
  }
  return packing;
}

int64_t maxLiveBytes(const std::vector<LiveInterval> &intervals) {
  std::map<int64_t, int64_t> delta; // step -> change of live bytes
  for (const LiveInterval &interval : intervals) {
    delta[interval.begin] += interval.bytes;
    delta[interval.end + 1] -= interval.bytes;
  }
  int64_t live = 0, peak = 0;
  for (auto [step, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return peak;
}

} // namespace bertc
