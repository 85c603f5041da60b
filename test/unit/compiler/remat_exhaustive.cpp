//===- remat_exhaustive.cpp - the remat problem solved by brute force ----===//

#include "remat_exhaustive.h"

#include <algorithm>
#include <limits>

namespace bertc::remat::exhaustive {

namespace {

/// One buffer of the whole step: [begin, end] events, inclusive.
struct Buffer {
  int begin = -1;
  int end = -1;
  int64_t bytes = 0;
};

} // namespace

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

} // namespace bertc::remat::exhaustive
