//===- RematSolver.h - what the backward recomputes, chosen exactly -*- C++ -*-===//
//
// The rematerialization problem on an abstract model that knows nothing of MLIR: a
// training step is a chain of blocks (BERT: its layers), each a small DAG of forward
// tensors with sizes and recomputation costs, followed by its backward steps, which
// read some of them. Every tensor the backward reads is either kept from the forward
// or recomputed by a clone placed just before its first backward reader. The solver
// picks the keep set of least total recomputation cost whose peak of live bytes meets
// a budget: exactly inside each block (every keep set), and exactly across blocks (a
// dynamic program over the Pareto front of held bytes, cost and peak).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace bertc::remat {

/// An operand or read that names the block's input: the previous block's output.
inline constexpr int kBlockInput = -1;
/// No operand.
inline constexpr int kNoOperand = -2;

/// One forward tensor of a block, made by one op.
struct Node {
  int64_t bytes = 0;
  /// What recomputing it costs (the pass uses picoseconds of a roofline estimate).
  int64_t cost = 0;
  /// What its op reads: earlier nodes of the block, or kBlockInput. Tensors that are
  /// always available (parameters, inputs) are not listed.
  std::vector<int> operands;
  /// An operand (node or kBlockInput) whose bytes the op may take over when that
  /// operand is last read here and has the same size (an in-place op); kNoOperand if none.
  int inPlaceOperand = kNoOperand;
  /// Whether the op may be cloned into the backward.
  bool recomputable = true;
  /// What copying it to host memory and back costs (the unit of `cost`), where its block
  /// offloads what it keeps (Block::offloadKept).
  int64_t offloadCost = 0;
};

/// One op of a block's backward, in program order.
struct BackwardStep {
  /// Forward tensors it reads: nodes of its block, or kBlockInput.
  std::vector<int> reads;
  /// Bytes of backward tensors (gradients) live while it runs.
  int64_t liveBytes = 0;
  /// Bytes of backward tensors live just before it runs (while the clones placed
  /// before it run).
  int64_t liveBeforeBytes = 0;
};

/// A block: its forward nodes, then (in the step's second half, blocks in reverse) its
/// backward steps. The last node (a block has at least one) is the block's output, the
/// next block's input; it is always kept.
struct Block {
  /// Bytes of the input (0 for a first block without one).
  int64_t inputBytes = 0;
  /// Whether the previous block's backward reads this block's input, which then stays
  /// live to the end of this block's backward whatever this block chooses.
  bool inputReadByPreviousBackward = false;
  /// Whether the input waits in host memory between this block's forward and backward
  /// (never with inputReadByPreviousBackward): on the device only while the forward reads
  /// it and again from its first backward reader (a clone or a step) on, copied back up
  /// there. It is then never held while later blocks run. Copying it costs
  /// inputOffloadCost.
  bool inputOffloaded = false;
  int64_t inputOffloadCost = 0;
  /// Whether every node the block keeps for its backward (the output aside) waits in host
  /// memory likewise, each at its offloadCost: then only an input the previous block's
  /// backward reads is held while later blocks run.
  bool offloadKept = false;
  std::vector<Node> nodes;
  std::vector<BackwardStep> backward;
};

/// The step: forward of blocks 0..n-1, then backward of blocks n-1..0.
using Chain = std::vector<Block>;

/// Which nodes of each block keep their forward value for the backward.
using KeepSets = std::vector<std::vector<bool>>;

/// What one choice of keep sets costs.
struct Evaluation {
  int64_t cost = 0;      ///< sum of the recomputed nodes' costs
  int64_t peakBytes = 0; ///< the most bytes live at any point of the step
  /// Per block, per node: whether the backward recomputes it (a clone).
  std::vector<std::vector<bool>> recomputed;
};

/// A chosen plan.
struct Solution {
  KeepSets keep;
  Evaluation evaluation;
};

/// The least-cost plan whose peak is at most `budgetBytes` (ties: the lower peak), or
/// nothing when no plan meets it.
std::optional<Solution> solveWithinBudget(const Chain &chain, int64_t budgetBytes);

/// The plan of lowest peak (ties: the lower cost): the most any recomputation saves.
Solution solveLowestPeak(const Chain &chain);

/// Cost, peak and clones of `keep`, or nothing if it keeps too little (a tensor the
/// backward needs is neither kept nor recomputable).
std::optional<Evaluation> evaluateKeepSets(const Chain &chain, const KeepSets &keep);

} // namespace bertc::remat
