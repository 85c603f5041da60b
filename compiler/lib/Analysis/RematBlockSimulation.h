//===- RematBlockSimulation.h - one block's keep set, simulated -*- C++ -*-===//
//
// Private to the analysis library: what the remat solver (RematSolver.cpp) measures of each
// keep set of a block, the live bytes over the block's timeline, and what it holds for the
// blocks after it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Analysis/RematSolver.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace bertc::remat {

/// What a block's keep set costs the step.
struct BlockFigures {
  int64_t held = 0;    ///< bytes kept live while later blocks run
  int64_t ownPeak = 0; ///< most bytes of the block's own live during its forward/backward
  int64_t cost = 0;
};

/// A buffer's first and last event (inclusive) in a block's timeline.
struct Life {
  int begin = -1;
  int end = -1;
  bool exists() const { return begin >= 0; }
};

/// The simulation of a block's keep sets, its buffers reused from one keep set to the next
/// (a block may take 2^20 of them).
class BlockSimulation {
public:
  /// Simulates `block` under `keep` (the output is kept whatever `keep` says); nothing if
  /// it keeps too little. The timeline is the block's forward (one event per node)
  /// followed by its backward: for each step, the clones first needed there (in node
  /// order), then the step.
  std::optional<BlockFigures> run(const Block &block, const std::vector<bool> &keep);
  /// Per node, whether the last run recomputed it (a clone).
  const std::vector<bool> &cloned() const { return cloned_; }

private:
  std::vector<int> firstStep_, cloneEvent_, stepEvent_;
  std::vector<bool> needed_, cloned_;
  std::vector<int64_t> backwardBytes_, delta_;
  std::vector<Life> original_, clone_, reloaded_;
};

} // namespace bertc::remat
