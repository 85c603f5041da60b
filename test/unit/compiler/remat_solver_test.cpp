//===- remat_solver_test.cpp - the remat solver against exhaustive search -===//
//
// The solver's optimum is checked against a brute force written here from the
// definitions: every keep set of every node of the whole step, each simulated over the
// whole step (all forwards, then all backwards in reverse, clones before their first
// reader), never block by block as the solver does. Hand-computed cases pin the
// semantics (what is live when) with the arithmetic written beside them.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/RematSolver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>

namespace {

using namespace bertc::remat;

/// One buffer of the whole step: [begin, end] events, inclusive.
struct Buffer {
  int begin = -1;
  int end = -1;
  int64_t bytes = 0;
};

struct BruteResult {
  bool valid = false;
  int64_t cost = 0;
  int64_t peak = 0;
};

/// Simulates `keep` over the whole step, from the definitions.
BruteResult simulateStep(const Chain &chain, const KeepSets &keep) {
  const int blocks = int(chain.size());
  // Clones: a fixpoint of "read by the backward or by a clone, and not kept".
  std::vector<std::vector<bool>> cloned(blocks);
  std::vector<std::vector<int>> firstNeed(blocks);
  BruteResult result;
  for (int l = 0; l < blocks; ++l) {
    const Block &block = chain[l];
    int n = int(block.nodes.size());
    cloned[l].assign(n, false);
    firstNeed[l].assign(n, std::numeric_limits<int>::max());
    for (bool changed = true; changed;) {
      changed = false;
      for (int v = 0; v < n - 1; ++v) {
        if (keep[l][v])
          continue;
        int need = std::numeric_limits<int>::max();
        for (size_t t = 0; t < block.backward.size(); ++t)
          for (int read : block.backward[t].reads)
            if (read == v)
              need = std::min(need, int(t));
        for (int w = 0; w < n; ++w)
          if (cloned[l][w])
            for (int u : block.nodes[w].operands)
              if (u == v)
                need = std::min(need, firstNeed[l][w]);
        if (need != std::numeric_limits<int>::max() && (!cloned[l][v] || need != firstNeed[l][v])) {
          cloned[l][v] = true;
          firstNeed[l][v] = need;
          changed = true;
        }
      }
    }
    for (int v = 0; v < n; ++v)
      if (cloned[l][v]) {
        if (!block.nodes[v].recomputable)
          return result;
        result.cost += block.nodes[v].cost;
      }
  }

  // Events: forward nodes of every block, then per block in reverse, per step, its
  // clones then the step. Backward bytes are known per event.
  std::vector<std::vector<int>> nodeEvent(blocks), cloneEvent(blocks), stepEvent(blocks);
  std::vector<int64_t> backwardBytes;
  for (int l = 0; l < blocks; ++l)
    for (size_t v = 0; v < chain[l].nodes.size(); ++v) {
      nodeEvent[l].push_back(int(backwardBytes.size()));
      backwardBytes.push_back(0);
    }
  for (int l = blocks - 1; l >= 0; --l) {
    const Block &block = chain[l];
    cloneEvent[l].assign(block.nodes.size(), -1);
    for (size_t t = 0; t < block.backward.size(); ++t) {
      for (size_t v = 0; v < block.nodes.size(); ++v)
        if (cloned[l][v] && firstNeed[l][v] == int(t)) {
          cloneEvent[l][v] = int(backwardBytes.size());
          backwardBytes.push_back(block.backward[t].liveBeforeBytes);
        }
      stepEvent[l].push_back(int(backwardBytes.size()));
      backwardBytes.push_back(block.backward[t].liveBytes);
    }
  }

  // Buffers: originals and clones. The block input is the previous block's output.
  std::vector<std::vector<Buffer>> original(blocks), clone(blocks);
  for (int l = 0; l < blocks; ++l) {
    for (size_t v = 0; v < chain[l].nodes.size(); ++v) {
      int64_t bytes = chain[l].nodes[v].bytes;
      original[l].push_back({nodeEvent[l][v], nodeEvent[l][v], bytes});
      clone[l].push_back(cloned[l][v] ? Buffer{cloneEvent[l][v], cloneEvent[l][v], bytes}
                                      : Buffer{});
    }
  }
  // An offloaded input is a second buffer in its block's backward, from its first reader
  // there (where it is copied back up).
  std::vector<Buffer> reloaded(blocks);
  for (int l = 0; l < blocks; ++l)
    reloaded[l].bytes = chain[l].inputBytes;
  // Likewise each node a block that offloads what it keeps reads in its backward.
  std::vector<std::vector<Buffer>> reloadedNode(blocks);
  for (int l = 0; l < blocks; ++l)
    for (const Node &node : chain[l].nodes)
      reloadedNode[l].push_back({-1, -1, node.bytes});
  // The buffer a reader in block l sees for operand `u` (a clone reads clones).
  auto target = [&](int l, int u, bool fromBackward) -> Buffer & {
    if (u == kBlockInput)
      return fromBackward && chain[l].inputOffloaded ? reloaded[l] : original[l - 1].back();
    if (fromBackward && cloned[l][u])
      return clone[l][u];
    bool output = u == int(chain[l].nodes.size()) - 1;
    return fromBackward && chain[l].offloadKept && !output ? reloadedNode[l][u] : original[l][u];
  };
  auto read = [](Buffer &buffer, int event) {
    buffer.begin = buffer.begin < 0 ? event : std::min(buffer.begin, event);
    buffer.end = std::max(buffer.end, event);
  };
  for (int l = 0; l < blocks; ++l) {
    const Block &block = chain[l];
    for (size_t w = 0; w < block.nodes.size(); ++w) {
      for (int u : block.nodes[w].operands) {
        read(target(l, u, false), nodeEvent[l][w]);
        if (cloned[l][w])
          read(target(l, u, true), cloneEvent[l][w]);
      }
    }
    for (size_t t = 0; t < block.backward.size(); ++t)
      for (int u : block.backward[t].reads)
        read(target(l, u, true), stepEvent[l][t]);
  }

  std::vector<int64_t> live = backwardBytes;
  auto cover = [&](const Buffer &buffer) {
    if (buffer.begin >= 0)
      for (int e = buffer.begin; e <= buffer.end; ++e)
        live[e] += buffer.bytes;
  };
  for (int l = 0; l < blocks; ++l) {
    for (size_t v = 0; v < chain[l].nodes.size(); ++v) {
      cover(original[l][v]);
      cover(clone[l][v]);
    }
    cover(reloaded[l]);
    if (reloaded[l].begin >= 0)
      result.cost += chain[l].inputOffloadCost;
    for (size_t v = 0; v < chain[l].nodes.size(); ++v) {
      cover(reloadedNode[l][v]);
      if (reloadedNode[l][v].begin >= 0)
        result.cost += chain[l].nodes[v].offloadCost;
    }
  }
  // In place: a result takes over an operand of its size that dies where it is made.
  for (int l = 0; l < blocks; ++l)
    for (size_t v = 0; v < chain[l].nodes.size(); ++v) {
      int u = chain[l].nodes[v].inPlaceOperand;
      if (u == kNoOperand)
        continue;
      for (bool isClone : {false, true}) {
        const Buffer &result = isClone ? clone[l][v] : original[l][v];
        if (result.begin < 0)
          continue;
        const Buffer &operand = target(l, u, isClone);
        if (operand.end == result.begin && operand.bytes == result.bytes)
          live[result.begin] -= result.bytes;
      }
    }
  result.valid = true;
  result.peak = *std::max_element(live.begin(), live.end());
  return result;
}

/// Every keep set of the chain (outputs always kept), each with its brute-force result.
std::vector<std::pair<KeepSets, BruteResult>> allKeepSets(const Chain &chain) {
  std::vector<std::pair<int, int>> free;
  KeepSets keep;
  for (size_t l = 0; l < chain.size(); ++l) {
    keep.emplace_back(chain[l].nodes.size(), false);
    keep.back().back() = true;
    for (size_t v = 0; v + 1 < chain[l].nodes.size(); ++v)
      free.push_back({int(l), int(v)});
  }
  std::vector<std::pair<KeepSets, BruteResult>> all;
  for (uint64_t mask = 0; mask < (uint64_t(1) << free.size()); ++mask) {
    for (size_t i = 0; i < free.size(); ++i)
      keep[free[i].first][free[i].second] = (mask >> i) & 1;
    BruteResult result = simulateStep(chain, keep);
    if (result.valid)
      all.push_back({keep, result});
  }
  return all;
}

/// A random chain: 1-3 blocks of 1-5 nodes, 14 free nodes at most in all.
Chain randomChain(std::mt19937 &rng) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Chain chain;
  int blocks = uniform(1, 3), freeNodes = 0;
  for (int l = 0; l < blocks; ++l) {
    Block block;
    if (l > 0)
      block.inputBytes = chain.back().nodes.back().bytes;
    int n = std::min(uniform(1, 5), 14 - freeNodes + 1);
    freeNodes += n - 1;
    for (int v = 0; v < n; ++v) {
      Node node;
      node.bytes = uniform(1, 12);
      node.cost = uniform(0, 20);
      node.recomputable = uniform(0, 6) > 0;
      for (int u = (l > 0 ? kBlockInput : 0); u < v; ++u)
        if (uniform(0, 2) == 0)
          node.operands.push_back(u);
      if (!node.operands.empty() && uniform(0, 2) == 0) {
        node.inPlaceOperand = node.operands[uniform(0, int(node.operands.size()) - 1)];
        node.bytes = node.inPlaceOperand == kBlockInput ? block.inputBytes
                                                        : block.nodes[node.inPlaceOperand].bytes;
      }
      block.nodes.push_back(node);
    }
    int steps = uniform(0, 4);
    for (int t = 0; t < steps; ++t) {
      BackwardStep step;
      for (int u = (l > 0 ? kBlockInput : 0); u < n; ++u)
        if (uniform(0, 2) == 0)
          step.reads.push_back(u);
      step.liveBytes = uniform(0, 15);
      step.liveBeforeBytes = uniform(0, int(step.liveBytes));
      block.backward.push_back(step);
    }
    chain.push_back(block);
  }
  for (int l = 1; l < blocks; ++l) {
    int previousOutput = int(chain[l - 1].nodes.size()) - 1;
    for (const BackwardStep &step : chain[l - 1].backward)
      for (int read : step.reads)
        if (read == previousOutput)
          chain[l].inputReadByPreviousBackward = true;
  }
  return chain;
}

/// randomChain's chain with about half the inputs that may wait in host memory offloaded,
/// and about half the blocks offloading what they keep, each copy at a random cost.
Chain randomOffloadedChain(std::mt19937 &rng) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Chain chain = randomChain(rng);
  for (size_t l = 0; l < chain.size(); ++l) {
    Block &block = chain[l];
    block.inputOffloaded = l > 0 && !block.inputReadByPreviousBackward && uniform(0, 1);
    block.inputOffloadCost = uniform(0, 20);
    block.offloadKept = uniform(0, 1);
    for (Node &node : block.nodes)
      node.offloadCost = uniform(0, 20);
  }
  return chain;
}

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
