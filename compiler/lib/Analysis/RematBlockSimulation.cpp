//===- RematBlockSimulation.cpp - one block's keep set, simulated ----------===//

#include "RematBlockSimulation.h"

#include <algorithm>
#include <limits>

namespace bertc::remat {

std::optional<BlockFigures> BlockSimulation::run(const Block &block,
                                                 const std::vector<bool> &keep) {
  const int n = int(block.nodes.size());
  const int output = n - 1;
  auto kept = [&](int v) { return v == output || keep[v]; };

  // 1. Clones: nodes the backward reads but does not keep, and their operands in turn.
  constexpr int kNever = std::numeric_limits<int>::max();
  std::vector<int> &firstStep = firstStep_; // first backward step that needs the node
  firstStep.assign(n, kNever);
  std::vector<bool> &needed = needed_;
  needed.assign(n, false);
  for (int step = int(block.backward.size()) - 1; step >= 0; --step)
    for (int read : block.backward[step].reads)
      if (read >= 0) {
        needed[read] = true;
        firstStep[read] = step;
      }
  std::vector<bool> &cloned = cloned_;
  cloned.assign(n, false);
  for (int v = n - 1; v >= 0; --v) {
    if (!needed[v] || kept(v))
      continue;
    if (!block.nodes[v].recomputable)
      return std::nullopt;
    cloned[v] = true;
    for (int u : block.nodes[v].operands)
      if (u >= 0) {
        needed[u] = true;
        firstStep[u] = std::min(firstStep[u], firstStep[v]);
      }
  }

  // 2. The timeline's events and the backward bytes at each.
  std::vector<int> &cloneEvent = cloneEvent_, &stepEvent = stepEvent_;
  cloneEvent.assign(n, -1);
  stepEvent.assign(block.backward.size(), 0);
  std::vector<int64_t> &backwardBytes = backwardBytes_;
  backwardBytes.assign(n, 0);
  for (size_t step = 0; step < block.backward.size(); ++step) {
    for (int v = 0; v < n; ++v)
      if (cloned[v] && firstStep[v] == int(step)) {
        cloneEvent[v] = int(backwardBytes.size());
        backwardBytes.push_back(block.backward[step].liveBeforeBytes);
      }
    stepEvent[step] = int(backwardBytes.size());
    backwardBytes.push_back(block.backward[step].liveBytes);
  }
  const int events = int(backwardBytes.size());

  // 3. Lives: the originals, the clones and the input. A reader is a forward node, a
  //    clone (which reads the clone of an operand if there is one) or a backward step.
  std::vector<Life> &original = original_, &clone = clone_, &reloaded = reloaded_;
  original.assign(n, Life{});
  clone.assign(n, Life{});
  reloaded.assign(n, Life{});
  Life input, inputReloaded; // an offloaded input's forward and backward lives
  auto extend = [](Life &life, int event) { life.end = std::max(life.end, event); };
  // A copy brought back up lives from its first backward reader on.
  auto readReloaded = [&](Life &life, int event) {
    life.begin = life.exists() ? std::min(life.begin, event) : event;
    extend(life, event);
  };
  auto readInput = [&](int event) {
    if (block.inputOffloaded && event >= n)
      return readReloaded(inputReloaded, event);
    input.begin = 0;
    extend(input, event);
  };
  // A kept node's read in the backward: of the copy brought back up, where the block
  // offloads what it keeps.
  auto readKept = [&](int v, int event) {
    if (block.offloadKept && v != output)
      return readReloaded(reloaded[v], event);
    extend(original[v], event);
  };
  auto readByClone = [&](int operand, int event) {
    if (operand == kBlockInput)
      readInput(event);
    else if (cloned[operand])
      extend(clone[operand], event);
    else
      readKept(operand, event);
  };
  // Read by the previous block's backward, the input outlives this block's timeline.
  if (block.inputBytes > 0 && block.inputReadByPreviousBackward)
    input = {0, events};
  for (int v = 0; v < n; ++v) {
    original[v] = {v, v};
    if (cloned[v])
      clone[v] = {cloneEvent[v], cloneEvent[v]};
    for (int u : block.nodes[v].operands) {
      if (u == kBlockInput)
        readInput(v);
      else
        extend(original[u], v);
    }
  }
  extend(original[output], n - 1);
  for (int v = 0; v < n; ++v)
    if (cloned[v])
      for (int u : block.nodes[v].operands)
        readByClone(u, cloneEvent[v]);
  for (size_t step = 0; step < block.backward.size(); ++step)
    for (int read : block.backward[step].reads) {
      if (read == kBlockInput)
        readInput(stepEvent[step]);
      else if (cloned[read])
        extend(clone[read], stepEvent[step]);
      else
        readKept(read, stepEvent[step]);
    }

  // 4. Live bytes per event; an in-place op's result shares the bytes of an operand
  //    that dies there.
  std::vector<int64_t> &delta = delta_;
  delta.assign(events + 2, 0);
  auto add = [&](const Life &life, int64_t bytes) {
    if (!life.exists() || bytes == 0)
      return;
    delta[life.begin] += bytes;
    delta[life.end + 1] -= bytes;
  };
  if (block.inputBytes > 0) {
    add(input, block.inputBytes);
    add(inputReloaded, block.inputBytes);
  }
  for (int v = 0; v < n; ++v) {
    add(original[v], block.nodes[v].bytes);
    add(reloaded[v], block.nodes[v].bytes);
    if (cloned[v])
      add(clone[v], block.nodes[v].bytes);
  }
  auto shareInPlace = [&](int v, const Life &result, bool isClone) {
    int u = block.nodes[v].inPlaceOperand;
    if (u == kNoOperand)
      return;
    const Life *operand = isClone && block.inputOffloaded ? &inputReloaded : &input;
    int64_t operandBytes = block.inputBytes;
    if (u >= 0) {
      operand = !isClone               ? &original[u]
                : cloned[u]            ? &clone[u]
                : reloaded[u].exists() ? &reloaded[u]
                                       : &original[u];
      operandBytes = block.nodes[u].bytes;
    }
    if (operand->exists() && operand->end == result.begin && operandBytes == block.nodes[v].bytes) {
      delta[result.begin] -= operandBytes;
      delta[result.begin + 1] += operandBytes;
    }
  };
  for (int v = 0; v < n; ++v) {
    shareInPlace(v, original[v], false);
    if (cloned[v])
      shareInPlace(v, clone[v], true);
  }

  BlockFigures figures;
  int64_t live = 0;
  for (int event = 0; event < events; ++event) {
    live += delta[event];
    figures.ownPeak = std::max(figures.ownPeak, live + backwardBytes[event]);
  }
  if (inputReloaded.exists())
    figures.cost += block.inputOffloadCost;
  for (int v = 0; v < n; ++v) {
    if (cloned[v])
      figures.cost += block.nodes[v].cost;
    if (reloaded[v].exists())
      figures.cost += block.nodes[v].offloadCost;
    if (v != output && original[v].end >= n)
      figures.held += block.nodes[v].bytes;
  }
  if (block.inputBytes > 0 && (block.inputReadByPreviousBackward || input.end >= n))
    figures.held += block.inputBytes;
  return figures;
}

} // namespace bertc::remat
