//===- remat_solver_test.cpp - the remat solver against exhaustive search -===//
//
// The solver's optimum is checked against the brute force of remat_exhaustive.h, written
// from the definitions over the whole step, never block by block as the solver does.
// Hand-computed cases pin the semantics (what is live when) with the arithmetic written
// beside them.
//
//===----------------------------------------------------------------------===//

#include "remat_exhaustive.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>

namespace {

using namespace bertc::remat;
using namespace bertc::remat::exhaustive;

/// Checks solveWithinBudget at every distinct peak (and one below the least) and
/// solveLowestPeak against the exhaustive search.
void checkAgainstExhaustive(const Chain &chain, int instance) {
  std::vector<std::pair<KeepSets, BruteResult>> all = allKeepSets(chain);
  ASSERT_FALSE(all.empty()) << "instance " << instance << ": keeping everything is valid";
  std::set<int64_t> budgets;
  for (const auto &[keep, result] : all)
    budgets.insert(result.peak);
  budgets.insert(*budgets.begin() - 1);
  for (int64_t budget : budgets) {
    std::optional<BruteResult> best;
    for (const auto &[keep, result] : all)
      if (result.peak <= budget &&
          (!best || std::tie(result.cost, result.peak) < std::tie(best->cost, best->peak)))
        best = result;
    std::optional<Solution> solved = solveWithinBudget(chain, budget);
    ASSERT_EQ(solved.has_value(), best.has_value())
        << "instance " << instance << ", budget " << budget;
    if (!best)
      continue;
    EXPECT_EQ(solved->evaluation.cost, best->cost)
        << "instance " << instance << ", budget " << budget;
    EXPECT_EQ(solved->evaluation.peakBytes, best->peak)
        << "instance " << instance << ", budget " << budget;
    // The solver's figures are those of its keep sets, simulated from scratch.
    BruteResult own = simulateStep(chain, solved->keep);
    EXPECT_TRUE(own.valid);
    EXPECT_EQ(own.cost, solved->evaluation.cost) << "instance " << instance;
    EXPECT_EQ(own.peak, solved->evaluation.peakBytes) << "instance " << instance;
  }
  BruteResult lowest = all.front().second;
  for (const auto &[keep, result] : all)
    if (std::tie(result.peak, result.cost) < std::tie(lowest.peak, lowest.cost))
      lowest = result;
  Solution solved = solveLowestPeak(chain);
  EXPECT_EQ(solved.evaluation.peakBytes, lowest.peak) << "instance " << instance;
  EXPECT_EQ(solved.evaluation.cost, lowest.cost) << "instance " << instance;
}

TEST(RematSolver, OptimalOnRandomChains) {
  std::mt19937 rng(20240611);
  for (int instance = 0; instance < 1000; ++instance) {
    Chain chain = randomChain(rng);
    checkAgainstExhaustive(chain, instance);
    if (HasFatalFailure() || HasNonfatalFailure())
      return;
  }
}

/// With block inputs waiting in host memory between their block's forward and backward.
TEST(RematSolver, OptimalWithOffloadedInputs) {
  std::mt19937 rng(20261207);
  for (int instance = 0; instance < 1000; ++instance) {
    Chain chain = randomOffloadedChain(rng);
    checkAgainstExhaustive(chain, instance);
    if (HasFatalFailure() || HasNonfatalFailure())
      return;
  }
}

/// Many identical blocks (the solver shares their keep sets): still optimal.
TEST(RematSolver, OptimalOnRepeatedBlocks) {
  std::mt19937 rng(7);
  int checked = 0;
  for (int instance = 0; instance < 300; ++instance) {
    Chain seed = randomChain(rng);
    Block layer = seed.back();
    if (layer.inputBytes == 0 || layer.nodes.size() > 4)
      continue;
    // Each block's output is the next one's input: the sizes must agree.
    for (Block *block : {&seed.front(), &layer}) {
      block->nodes.back().bytes = layer.inputBytes;
      block->nodes.back().inPlaceOperand = kNoOperand;
    }
    Chain chain{seed.front()};
    for (int l = 1; l < 4; ++l)
      chain.push_back(layer);
    for (size_t l = 1; l < chain.size(); ++l) {
      chain[l].inputReadByPreviousBackward = false;
      int previousOutput = int(chain[l - 1].nodes.size()) - 1;
      for (const BackwardStep &step : chain[l - 1].backward)
        for (int read : step.reads)
          if (read == previousOutput)
            chain[l].inputReadByPreviousBackward = true;
    }
    size_t freeNodes = 0;
    for (const Block &block : chain)
      freeNodes += block.nodes.size() - 1;
    if (freeNodes > 14)
      continue;
    checkAgainstExhaustive(chain, instance);
    if (HasFatalFailure() || HasNonfatalFailure())
      return;
    ++checked;
  }
  EXPECT_GE(checked, 50);
}

/// One block: a (10 B, cost 7) -> b (10 B, cost 3) -> out (1 B); the backward's first
/// step holds 20 B of gradients and reads nothing, the second (5 B) reads b.
Chain oneBlock(bool bInPlace) {
  Block block;
  block.nodes = {{10, 7, {}, kNoOperand, true},
                 {10, 3, {0}, bInPlace ? 0 : kNoOperand, true},
                 {1, 1, {1}, kNoOperand, true}};
  block.backward = {{{}, 20, 0}, {{1}, 5, 5}};
  return {block};
}

// Events: a, b, out, then the backward.
// Keep b:        b lives to step 1; at step 0: b 10 + 20 = 30.             cost 0
// Recompute b:   its clone needs a, kept to then; at step 0: a 10 + 20 = 30. cost 3
// Recompute a,b: clones before step 1: a' 10 + b' 10 + 5 = 25;
//                the forward peaks at b: a 10 + b 10 = 20.                cost 10
TEST(RematSolver, HandComputedOneBlock) {
  Chain chain = oneBlock(false);
  std::optional<Solution> keepAll = solveWithinBudget(chain, 30);
  ASSERT_TRUE(keepAll);
  EXPECT_EQ(keepAll->evaluation.cost, 0);
  EXPECT_EQ(keepAll->evaluation.peakBytes, 30);

  std::optional<Solution> both = solveWithinBudget(chain, 29);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->evaluation.cost, 10);
  EXPECT_EQ(both->evaluation.peakBytes, 25);
  EXPECT_EQ(both->evaluation.recomputed[0], (std::vector<bool>{true, true, false}));

  EXPECT_FALSE(solveWithinBudget(chain, 24));
  EXPECT_EQ(solveLowestPeak(chain).evaluation.peakBytes, 25);
}

// With b in place over a, b' takes over a' too: 10 + 5 = 15 at b', and the forward
// holds 10 at b; the peak is step 0's 20 B of gradients.
TEST(RematSolver, HandComputedInPlace) {
  Chain chain = oneBlock(true);
  std::optional<Solution> both = solveWithinBudget(chain, 29);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->evaluation.cost, 10);
  EXPECT_EQ(both->evaluation.peakBytes, 20);
}

// Two blocks: p (6 B, cost 4) -> out0 (2 B) | q (6 B, cost 4) -> out1 (1 B), each
// backward one step of 1 B reading p, resp. q and the input out0.
// Keep all:    at out1: p 6 + out0 2 + q 6 + out1 1 = 15.            cost 0
// Recompute q: the same 15 (p is held while block 1 runs).           cost 4
// Recompute p: p dies at out0; at out1: out0 2 + q 6 + out1 1 = 9;
//              in block 0's backward: p' 6 + 1 = 7.                  cost 4
// Both:        the same 9.                                          cost 8
TEST(RematSolver, HandComputedTwoBlocks) {
  Block first;
  first.nodes = {{6, 4, {}, kNoOperand, true}, {2, 9, {0}, kNoOperand, true}};
  first.backward = {{{0}, 1, 1}};
  Block second;
  second.inputBytes = 2;
  second.nodes = {{6, 4, {kBlockInput}, kNoOperand, true}, {1, 9, {0}, kNoOperand, true}};
  second.backward = {{{0, kBlockInput}, 1, 1}};
  Chain chain{first, second};

  std::optional<Solution> keepAll = solveWithinBudget(chain, 15);
  ASSERT_TRUE(keepAll);
  EXPECT_EQ(keepAll->evaluation.cost, 0);
  EXPECT_EQ(keepAll->evaluation.peakBytes, 15);

  std::optional<Solution> recomputeP = solveWithinBudget(chain, 14);
  ASSERT_TRUE(recomputeP);
  EXPECT_EQ(recomputeP->evaluation.cost, 4);
  EXPECT_EQ(recomputeP->evaluation.peakBytes, 9);
  EXPECT_EQ(recomputeP->evaluation.recomputed[0], (std::vector<bool>{true, false}));
  EXPECT_EQ(recomputeP->evaluation.recomputed[1], (std::vector<bool>{false, false}));

  EXPECT_FALSE(solveWithinBudget(chain, 8));
  Solution lowest = solveLowestPeak(chain);
  EXPECT_EQ(lowest.evaluation.peakBytes, 9);
  EXPECT_EQ(lowest.evaluation.cost, 4);
}

// Three blocks, everything kept: a (4 B) -> out0 (8 B) | b (4 B) -> out1 (8 B) | c (4 B) ->
// out2 (1 B); each backward one step of no gradient bytes, reading a; block 1's input out0
// and b; c.
// On the device: while block 2 runs, block 0 holds a (4) and block 1 its input and b (12);
// block 2's own peak is at c: its input 8 + c 4 = 12. Peak 4 + 12 + 12 = 28.
// Block 1's input in host memory: block 1 holds b alone (4), so block 2 peaks at 4 + 4 + 12
// = 20; block 1's own peak, 12 (its input 8 + b 4 at b, at its backward step the reloaded
// input 8 + b 4), over block 0's 4 makes 16; block 0 alone peaks at a 4 + out0 8 = 12.
TEST(RematSolver, HandComputedOffloadedInput) {
  Block first;
  first.nodes = {{4, 1, {}, kNoOperand, true}, {8, 1, {0}, kNoOperand, true}};
  first.backward = {{{0}, 0, 0}};
  Block second;
  second.inputBytes = 8;
  second.nodes = {{4, 1, {kBlockInput}, kNoOperand, true}, {8, 1, {0}, kNoOperand, true}};
  second.backward = {{{kBlockInput, 0}, 0, 0}};
  Block third;
  third.inputBytes = 8;
  third.nodes = {{4, 1, {kBlockInput}, kNoOperand, true}, {1, 1, {0}, kNoOperand, true}};
  third.backward = {{{0}, 0, 0}};
  Chain chain{first, second, third};
  KeepSets all{{true, true}, {true, true}, {true, true}};
  ASSERT_EQ(evaluateKeepSets(chain, all)->peakBytes, 28);
  chain[1].inputOffloaded = true;
  std::optional<Evaluation> offloaded = evaluateKeepSets(chain, all);
  ASSERT_TRUE(offloaded);
  EXPECT_EQ(offloaded->peakBytes, 20);
  EXPECT_EQ(offloaded->cost, 0);
  std::optional<Solution> solved = solveWithinBudget(chain, 20);
  ASSERT_TRUE(solved);
  EXPECT_EQ(solved->evaluation.cost, 0);
}

/// A node the backward reads that cannot be cloned is always kept.
TEST(RematSolver, KeepsWhatCannotBeRecomputed) {
  Chain chain = oneBlock(false);
  chain[0].nodes[1].recomputable = false;
  std::optional<Solution> solved = solveWithinBudget(chain, 1000);
  ASSERT_TRUE(solved);
  EXPECT_TRUE(solved->keep[0][1]);
  EXPECT_FALSE(evaluateKeepSets(chain, {{true, false, true}}));
  EXPECT_EQ(solveLowestPeak(chain).evaluation.cost, 0);
}

/// A lower budget never gives a higher peak (ties in cost go to the lower peak).
TEST(RematSolver, PeakIsMonotoneInTheBudget) {
  std::mt19937 rng(99);
  for (int instance = 0; instance < 100; ++instance) {
    Chain chain = randomChain(rng);
    int64_t previousPeak = std::numeric_limits<int64_t>::max();
    for (int64_t budget =
             solveWithinBudget(chain, std::numeric_limits<int64_t>::max())->evaluation.peakBytes;
         budget >= 0; --budget) {
      std::optional<Solution> solved = solveWithinBudget(chain, budget);
      if (!solved)
        break;
      EXPECT_LE(solved->evaluation.peakBytes, previousPeak) << "instance " << instance;
      previousPeak = solved->evaluation.peakBytes;
    }
  }
}

} // namespace
