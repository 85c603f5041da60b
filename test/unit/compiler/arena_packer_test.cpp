//===- arena_packer_test.cpp - the packer against a brute-force checker ---===//
//
// Feeds packIntervals adversarial interval sets and checks every packing with a
// checker written here from the definitions (all pairs, every step), never with the
// packer's own helpers. Each test prints packing.bytes over the max-live lower bound.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/ArenaPacker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

namespace {

using bertc::ArenaPacking;
using bertc::LiveInterval;
using Intervals = std::vector<LiveInterval>;

/// Bytes alive at the busiest step, summed step by step over every interval.
int64_t bruteForceMaxLive(const Intervals &intervals) {
  int64_t first = 0, last = -1;
  for (const LiveInterval &interval : intervals) {
    first = std::min(first, interval.begin);
    last = std::max(last, interval.end);
  }
  int64_t peak = 0;
  for (int64_t step = first; step <= last; ++step) {
    int64_t live = 0;
    for (const LiveInterval &interval : intervals)
      if (interval.begin <= step && step <= interval.end)
        live += interval.bytes;
    peak = std::max(peak, live);
  }
  return peak;
}

/// Packs `intervals` and checks the result from the definitions:
/// 1. one offset per buffer, each non-negative and a multiple of `alignment`;
/// 2. `bytes` covers every buffer's end;
/// 3. no two buffers alive at a common step share a byte (every pair is checked);
/// 4. maxLiveBytes equals the step-by-step sum, and `bytes` is at least that.
/// Prints bytes / lower bound and returns the packing.
ArenaPacking packAndCheck(const char *name, const Intervals &intervals, int64_t alignment) {
  ArenaPacking packing = bertc::packIntervals(intervals, alignment);
  EXPECT_EQ(packing.offsets.size(), intervals.size());
  if (packing.offsets.size() != intervals.size())
    return packing;
  for (size_t i = 0; i < intervals.size(); ++i) {
    int64_t offset = packing.offsets[i];
    EXPECT_GE(offset, 0) << "buffer " << i;
    EXPECT_EQ(offset % alignment, 0) << "buffer " << i << " at " << offset;
    EXPECT_GE(packing.bytes, offset + intervals[i].bytes) << "buffer " << i;
  }
  for (size_t i = 0; i < intervals.size(); ++i) {
    for (size_t j = i + 1; j < intervals.size(); ++j) {
      const LiveInterval &a = intervals[i], &b = intervals[j];
      bool sameTime = !(a.end < b.begin || b.end < a.begin);
      int64_t aBegin = packing.offsets[i], bBegin = packing.offsets[j];
      bool sameBytes = aBegin < bBegin + b.bytes && bBegin < aBegin + a.bytes;
      EXPECT_FALSE(sameTime && sameBytes)
          << "buffers " << i << " [" << aBegin << ", " << aBegin + a.bytes << ") and " << j << " ["
          << bBegin << ", " << bBegin + b.bytes << ") are alive together";
    }
  }
  int64_t lowerBound = bruteForceMaxLive(intervals);
  EXPECT_EQ(bertc::maxLiveBytes(intervals), lowerBound);
  EXPECT_GE(packing.bytes, lowerBound);
  std::printf("[  ratio   ] %-28s %10lld / %10lld = %.4f\n", name,
              static_cast<long long>(packing.bytes), static_cast<long long>(lowerBound),
              lowerBound ? double(packing.bytes) / double(lowerBound) : 1.0);
  return packing;
}

/// Uniform in [low, high] from the raw engine output, so that the set is the same with
/// every standard library (std::uniform_int_distribution is not).
int64_t uniform(std::mt19937_64 &engine, int64_t low, int64_t high) {
  return low + int64_t(engine() % uint64_t(high - low + 1));
}

// Each interval inside the previous one: all are alive at the middle step, so they must
// be stacked and the sum (sizes are aligned) is both optimal and the lower bound.
TEST(ArenaPacker, NestedIntervalsStackExactly) {
  Intervals intervals;
  for (int64_t depth = 0; depth < 12; ++depth)
    intervals.push_back({depth, 100 - depth, 64 * (1 + (depth * 7) % 5)});
  ArenaPacking packing = packAndCheck("nested", intervals, 64);
  EXPECT_EQ(packing.bytes, bruteForceMaxLive(intervals));
}

// One long parent holding children that follow each other in time: the children share
// one slot beside the parent, so the optimum is parent + largest child.
TEST(ArenaPacker, NestedSiblingsShareTheSpaceBesideTheirParent) {
  Intervals intervals = {{0, 100, 4096}};
  for (int64_t child = 0; child < 20; ++child)
    intervals.push_back({1 + 5 * child, 4 + 5 * child, 64 * (1 + child % 6)});
  ArenaPacking packing = packAndCheck("nested siblings", intervals, 64);
  EXPECT_EQ(packing.bytes, 4096 + 64 * 6);
}

// Overlapping windows with sizes that rise and fall: the shape that makes greedy by
// size leave holes. Only validity and the lower bound are asserted.
TEST(ArenaPacker, Staircase) {
  Intervals intervals;
  for (int64_t step = 0; step < 60; ++step)
    intervals.push_back({step, step + 4, 100 * (1 + (step % 10 < 5 ? step % 5 : 9 - step % 10))});
  packAndCheck("staircase", intervals, 64);
}

// Equal sizes reduce packing to interval colouring, which first-fit in order of begin
// (the packer's tie-break) solves exactly: the peak number of live buffers times the size.
TEST(ArenaPacker, ManyEqualSizesReachTheLowerBound) {
  std::mt19937_64 engine(7);
  Intervals intervals;
  for (int i = 0; i < 300; ++i) {
    int64_t begin = uniform(engine, 0, 400);
    intervals.push_back({begin, begin + uniform(engine, 0, 30), 256});
  }
  ArenaPacking packing = packAndCheck("equal sizes", intervals, 256);
  EXPECT_EQ(packing.bytes, bruteForceMaxLive(intervals));
}

// A huge buffer for half the program and many one-byte buffers around it: alignment
// makes each tiny buffer cost 64 bytes, which the raw lower bound does not see.
TEST(ArenaPacker, OneHugeAndManyTiny) {
  Intervals intervals = {{0, 50, 1 << 20}};
  std::mt19937_64 engine(11);
  for (int i = 0; i < 200; ++i) {
    int64_t begin = uniform(engine, 0, 100);
    intervals.push_back({begin, begin + uniform(engine, 0, 10), uniform(engine, 1, 8)});
  }
  ArenaPacking packing = packAndCheck("one huge, many tiny", intervals, 64);
  EXPECT_EQ(packing.offsets[0], 0) << "the largest buffer is placed first";
}

// Buffers that are never alive together all start at offset 0; the arena is the largest.
TEST(ArenaPacker, DisjointInTimeShareOffsetZero) {
  Intervals intervals;
  for (int64_t i = 0; i < 50; ++i)
    intervals.push_back({3 * i, 3 * i + 2, 1 + (i * 37) % 1000});
  ArenaPacking packing = packAndCheck("disjoint in time", intervals, 256);
  for (int64_t offset : packing.offsets)
    EXPECT_EQ(offset, 0);
  EXPECT_EQ(packing.bytes, bruteForceMaxLive(intervals));
}

// 500 intervals of any length and size (fixed seed), with odd sizes and alignment 256.
TEST(ArenaPacker, RandomSet) {
  std::mt19937_64 engine(42);
  Intervals intervals;
  for (int i = 0; i < 500; ++i) {
    int64_t begin = uniform(engine, 0, 999);
    int64_t length = uniform(engine, 0, 1) ? uniform(engine, 0, 20) : uniform(engine, 0, 300);
    intervals.push_back({begin, begin + length, uniform(engine, 1, 1 << 20)});
  }
  packAndCheck("random 500", intervals, 256);
}

// The same set packs identically whatever the input order of its equal buffers.
TEST(ArenaPacker, EqualBuffersPackTheSameInAnyOrder) {
  Intervals forward, backward;
  for (int64_t i = 0; i < 20; ++i)
    forward.push_back({i, i + 3, 128});
  backward.assign(forward.rbegin(), forward.rend());
  ArenaPacking a = packAndCheck("equal, forward", forward, 64);
  ArenaPacking b = packAndCheck("equal, backward", backward, 64);
  EXPECT_EQ(a.bytes, b.bytes);
  for (size_t i = 0; i < forward.size(); ++i)
    EXPECT_EQ(a.offsets[i], b.offsets[forward.size() - 1 - i]);
}

TEST(ArenaPacker, EmptySetNeedsNoBytes) {
  ArenaPacking packing = packAndCheck("empty", {}, 64);
  EXPECT_EQ(packing.bytes, 0);
  EXPECT_EQ(bertc::maxLiveBytes({}), 0);
}

} // namespace
