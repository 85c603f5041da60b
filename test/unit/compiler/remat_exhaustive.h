//===- remat_exhaustive.h - the remat problem solved by brute force -*- C++ -*-===//
//
// The reference the remat solver's tests compare with, written from the definitions: every
// keep set of every node of the whole step, each simulated over the whole step (all
// forwards, then all backwards in reverse, clones before their first reader, offloaded
// tensors brought back at their first backward reader), never block by block as the solver
// does; and the random chains it is run on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Analysis/RematSolver.h"

#include <random>
#include <utility>
#include <vector>

namespace bertc::remat::exhaustive {

/// A keep set's cost and peak over the whole step, or not valid (it keeps too little).
struct BruteResult {
  bool valid = false;
  int64_t cost = 0;
  int64_t peak = 0;
};

/// Simulates `keep` over the whole step, from the definitions.
BruteResult simulateStep(const Chain &chain, const KeepSets &keep);

/// Every keep set of the chain (outputs always kept), each with its brute-force result.
std::vector<std::pair<KeepSets, BruteResult>> allKeepSets(const Chain &chain);

/// A random chain: 1-3 blocks of 1-5 nodes, 14 free nodes at most in all.
Chain randomChain(std::mt19937 &rng);

/// randomChain's chain with about half the inputs that may wait in host memory offloaded,
/// and about half the blocks offloading what they keep, each copy at a random cost.
Chain randomOffloadedChain(std::mt19937 &rng);

} // namespace bertc::remat::exhaustive
