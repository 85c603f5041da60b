//===- ArenaPacker.h - static offsets for buffers with lifetimes -*- C++ -*-===//
//
// Packs buffers with known live intervals into one arena so that buffers alive at the
// same time never overlap. Knows nothing of MLIR: the planner feeds it intervals.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <vector>

namespace bertc {

/// A buffer of `bytes` bytes alive from step `begin` to step `end`, both inclusive.
struct LiveInterval {
  int64_t begin;
  int64_t end;
  int64_t bytes;
};

/// Whether two intervals are alive at a common step.
inline bool overlapsInTime(const LiveInterval &a, const LiveInterval &b) {
  return a.begin <= b.end && b.begin <= a.end;
}

/// Offsets for `intervals` (same order) and the bytes they span.
struct ArenaPacking {
  std::vector<int64_t> offsets;
  int64_t bytes = 0;
};

/// Greedy by size: places buffers largest first, each at the lowest offset (a multiple
/// of `alignment`) where it overlaps no placed buffer that is alive at the same time.
ArenaPacking packIntervals(const std::vector<LiveInterval> &intervals, int64_t alignment);

/// The largest number of bytes alive at any one step: no packing can do better.
int64_t maxLiveBytes(const std::vector<LiveInterval> &intervals);

/// Rounds `value` up to a multiple of `alignment`.
inline int64_t alignTo(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

} // namespace bertc
