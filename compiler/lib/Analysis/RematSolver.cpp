//===- RematSolver.cpp - what the backward recomputes, chosen exactly -----===//
//
// The step's live bytes split by block. While block l runs its forward or backward,
// each earlier block j < l holds the bytes it keeps for its own backward (held_j, fixed
// once its forward is done), later blocks hold nothing (their backward is over, or
// their forward has not begun), and block l has its own profile over time. So
//     peak = max over l of (held_0 + ... + held_{l-1} + ownPeak_l),
// and a keep set of one block matters to the others only through held and ownPeak.
//
//  1. Per block, every keep set of its decision nodes is simulated (BlockSimulation):
//     the clones it implies, each placed before its first backward reader, and the
//     live bytes at every forward op, clone and backward op. Blocks with the same
//     description share the result (BERT's layers are identical).
//  2. Keep sets dominated in (held, ownPeak, cost) are dropped.
//  3. A dynamic program over the blocks in order keeps the Pareto front of partial
//     plans in (held so far, cost, peak so far), dropping those over the budget; for
//     the least cost, a plan that costs strictly more than one holding no more is dropped
//     too, whatever its peak (leastCostFront).
//  4. The best final state (least cost, then lowest peak; or lowest peak, then least
//     cost) is traced back to one keep set per block.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/RematSolver.h"

#include "RematBlockSimulation.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace bertc::remat {

namespace {

/// A block's keep set, as the bits of its decision nodes (BlockChoices), and its figures.
struct BlockProfile : BlockFigures {
  uint32_t mask = 0;
};

/// Drops every item that another item is at most in all three keys (keeping the first
/// of equal ones). `keys` gives (a, b, c); the order of the survivors is by (a, b, c).
template <typename T, typename Keys> std::vector<T> paretoFront(std::vector<T> items, Keys keys) {
  std::stable_sort(items.begin(), items.end(),
                   [&](const T &x, const T &y) { return keys(x) < keys(y); });
  std::map<int64_t, int64_t> staircase; // b -> least c among kept items with that b or less
  std::vector<T> front;
  for (T &item : items) {
    auto [a, b, c] = keys(item);
    auto next = staircase.upper_bound(b);
    if (next != staircase.begin() && std::prev(next)->second <= c)
      continue;
    while (next != staircase.end() && next->second >= c)
      next = staircase.erase(next);
    staircase[b] = c;
    front.push_back(std::move(item));
  }
  return front;
}

/// The nodes whose keep decision can matter: those the backward reads and, through
/// recomputable ops, their operands. The output is always kept.
std::vector<int> decisionNodes(const Block &block) {
  const int n = int(block.nodes.size());
  std::vector<bool> relevant(n, false);
  for (const BackwardStep &step : block.backward)
    for (int read : step.reads)
      if (read >= 0)
        relevant[read] = true;
  for (int v = n - 1; v >= 0; --v)
    if (relevant[v] && block.nodes[v].recomputable)
      for (int u : block.nodes[v].operands)
        if (u >= 0)
          relevant[u] = true;
  std::vector<int> decisions;
  for (int v = 0; v < n - 1; ++v)
    if (relevant[v])
      decisions.push_back(v);
  return decisions;
}

/// More decision nodes than this are kept outright (the cheapest to recompute per byte
/// stay decisions), so that a block never takes more than 2^20 simulations.
constexpr size_t kMaxDecisions = 20;

/// A block's useful keep sets: its decision nodes, the nodes kept outright (the output, and
/// the decisions past kMaxDecisions), and the Pareto-reduced profiles, each keep set a mask
/// over the decisions.
struct BlockChoices {
  std::vector<int> decisions;
  std::vector<bool> keptOutright;
  std::vector<BlockProfile> profiles;

  /// The keep set of `mask`.
  std::vector<bool> keepOf(uint32_t mask) const {
    std::vector<bool> keep = keptOutright;
    for (size_t i = 0; i < decisions.size(); ++i)
      keep[decisions[i]] = (mask >> i) & 1;
    return keep;
  }
};

/// Every useful keep set of `block`, Pareto-reduced.
BlockChoices blockChoices(const Block &block) {
  BlockChoices choices{decisionNodes(block), std::vector<bool>(block.nodes.size(), false), {}};
  choices.keptOutright.back() = true;
  std::vector<int> &decisions = choices.decisions;
  if (decisions.size() > kMaxDecisions) {
    std::stable_sort(decisions.begin(), decisions.end(), [&](int a, int b) {
      const Node &x = block.nodes[a], &y = block.nodes[b];
      return double(x.cost) * double(std::max<int64_t>(y.bytes, 1)) <
             double(y.cost) * double(std::max<int64_t>(x.bytes, 1));
    });
    for (size_t i = kMaxDecisions; i < decisions.size(); ++i)
      choices.keptOutright[decisions[i]] = true;
    decisions.resize(kMaxDecisions);
  }
  BlockSimulation simulation;
  std::vector<bool> keep = choices.keptOutright;
  std::vector<BlockProfile> profiles;
  for (uint32_t mask = 0; mask < (uint32_t(1) << decisions.size()); ++mask) {
    for (size_t i = 0; i < decisions.size(); ++i)
      keep[decisions[i]] = (mask >> i) & 1;
    if (std::optional<BlockFigures> figures = simulation.run(block, keep))
      profiles.push_back({*figures, mask});
  }
  choices.profiles = paretoFront(std::move(profiles), [](const BlockProfile &p) {
    return std::make_tuple(p.cost, p.held, p.ownPeak);
  });
  return choices;
}

/// A block's description as numbers, so that identical blocks are solved once.
std::vector<int64_t> blockKey(const Block &block) {
  std::vector<int64_t> key{block.inputBytes, block.inputReadByPreviousBackward,
                           block.inputOffloaded, block.inputOffloadCost, block.offloadKept};
  for (const Node &node : block.nodes) {
    key.insert(key.end(), {node.bytes, node.cost, node.inPlaceOperand, node.recomputable,
                           node.offloadCost, int64_t(node.operands.size())});
    key.insert(key.end(), node.operands.begin(), node.operands.end());
  }
  for (const BackwardStep &step : block.backward) {
    key.insert(key.end(), {step.liveBytes, step.liveBeforeBytes, int64_t(step.reads.size())});
    key.insert(key.end(), step.reads.begin(), step.reads.end());
  }
  return key;
}

/// A partial plan over the first blocks.
struct State {
  int64_t held = 0;
  int64_t cost = 0;
  int64_t peak = 0;
  int parent = -1; ///< index in the previous block's states
  int choice = -1; ///< index in this block's profiles
};

enum class Goal { LeastCost, LowestPeak };

/// The partial plans worth extending when the goal is the least cost (then the lowest
/// peak), from `states` sorted by (cost, held, peak): a plan is dropped when another costs
/// strictly less and holds no more, since every completion of it then has a cheaper
/// completion of the other, which fits wherever it does (peaks only grow with what is held,
/// and every plan here is within the budget); among plans of equal cost, one is dropped
/// when another holds and peaks no more (the final tie-break is the peak). The first of
/// equal ones is kept, so the plan chosen is the one the three-key front would give.
std::vector<State> leastCostFront(std::vector<State> states) {
  std::vector<State> front;
  int64_t leastHeldCheaper = std::numeric_limits<int64_t>::max();
  for (size_t begin = 0; begin < states.size();) {
    size_t end = begin;
    while (end < states.size() && states[end].cost == states[begin].cost)
      ++end;
    int64_t leastPeak = std::numeric_limits<int64_t>::max();
    int64_t leastHeld = leastHeldCheaper;
    for (size_t i = begin; i < end; ++i) {
      const State &state = states[i];
      if (state.held >= leastHeldCheaper || state.peak >= leastPeak)
        continue;
      leastPeak = state.peak;
      leastHeld = std::min(leastHeld, state.held);
      front.push_back(state);
    }
    leastHeldCheaper = leastHeld;
    begin = end;
  }
  return front;
}

std::optional<Solution> solve(const Chain &chain, int64_t budgetBytes, Goal goal) {
  std::map<std::vector<int64_t>, BlockChoices> choicesByKey;
  std::vector<const BlockChoices *> choices;
  std::vector<const std::vector<BlockProfile> *> profiles;
  for (const Block &block : chain) {
    std::vector<int64_t> key = blockKey(block);
    auto found = choicesByKey.find(key);
    if (found == choicesByKey.end())
      found = choicesByKey.emplace(std::move(key), blockChoices(block)).first;
    choices.push_back(&found->second);
    profiles.push_back(&found->second.profiles);
  }

  std::vector<std::vector<State>> states(chain.size() + 1);
  states[0].push_back({});
  for (size_t l = 0; l < chain.size(); ++l) {
    std::vector<State> next;
    for (size_t s = 0; s < states[l].size(); ++s) {
      const State &state = states[l][s];
      for (size_t c = 0; c < profiles[l]->size(); ++c) {
        const BlockProfile &profile = (*profiles[l])[c];
        int64_t peak = std::max(state.peak, state.held + profile.ownPeak);
        if (peak > budgetBytes)
          continue;
        next.push_back(
            {state.held + profile.held, state.cost + profile.cost, peak, int(s), int(c)});
      }
    }
    auto keys = [](const State &x) { return std::make_tuple(x.cost, x.held, x.peak); };
    if (goal == Goal::LeastCost) {
      std::stable_sort(next.begin(), next.end(),
                       [&](const State &x, const State &y) { return keys(x) < keys(y); });
      states[l + 1] = leastCostFront(std::move(next));
    } else {
      states[l + 1] = paretoFront(std::move(next), keys);
    }
    if (states[l + 1].empty())
      return std::nullopt;
  }

  const std::vector<State> &last = states.back();
  auto better = [&](const State &x, const State &y) {
    return goal == Goal::LeastCost ? std::tie(x.cost, x.peak) < std::tie(y.cost, y.peak)
                                   : std::tie(x.peak, x.cost) < std::tie(y.peak, y.cost);
  };
  int best = int(std::min_element(last.begin(), last.end(), better) - last.begin());
  Solution solution;
  solution.keep.resize(chain.size());
  solution.evaluation.recomputed.resize(chain.size());
  solution.evaluation.cost = last[best].cost;
  solution.evaluation.peakBytes = last[best].peak;
  BlockSimulation simulation;
  for (size_t l = chain.size(); l > 0; --l) {
    const State &state = states[l][best];
    const BlockProfile &profile = (*profiles[l - 1])[state.choice];
    solution.keep[l - 1] = choices[l - 1]->keepOf(profile.mask);
    // The keep set's clones, simulated again: profiles keep only their figures.
    simulation.run(chain[l - 1], solution.keep[l - 1]);
    solution.evaluation.recomputed[l - 1] = simulation.cloned();
    best = state.parent;
  }
  return solution;
}

} // namespace

std::optional<Solution> solveWithinBudget(const Chain &chain, int64_t budgetBytes) {
  return solve(chain, budgetBytes, Goal::LeastCost);
}

Solution solveLowestPeak(const Chain &chain) {
  return *solve(chain, std::numeric_limits<int64_t>::max(), Goal::LowestPeak);
}

std::optional<Evaluation> evaluateKeepSets(const Chain &chain, const KeepSets &keep) {
  Evaluation evaluation;
  if (keep.size() != chain.size())
    return std::nullopt;
  int64_t held = 0;
  BlockSimulation simulation;
  for (size_t l = 0; l < chain.size(); ++l) {
    if (keep[l].size() != chain[l].nodes.size())
      return std::nullopt;
    std::optional<BlockFigures> figures = simulation.run(chain[l], keep[l]);
    if (!figures)
      return std::nullopt;
    evaluation.cost += figures->cost;
    evaluation.peakBytes = std::max(evaluation.peakBytes, held + figures->ownPeak);
    evaluation.recomputed.push_back(simulation.cloned());
    held += figures->held;
  }
  return evaluation;
}

} // namespace bertc::remat
