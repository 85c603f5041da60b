//===- RematChain.cpp - @micro_step as the remat solver's chain -----------===//
//
// 1. The forward ops are those the returned loss depends on; the rest (parameters and
//    inputs aside) are the backward, in program order.
// 2. A cut follows a forward op whose result is then the only forward tensor still to
//    be read. A cut ends a block when the stretch since the previous cut holds a
//    compute-bound op (a GEMM, attention): recomputing across it would repeat real
//    compute, so its tensor is a natural checkpoint. The memory-bound stretches
//    (LayerNorm, residual adds) stay inside blocks, where the solver may recompute
//    them. So a BERT layer is two blocks, [LayerNorm, feed-forward] and [LayerNorm,
//    attention, output], each repeated once per layer.
// 3. Each backward op belongs to the latest block that sees every forward tensor it
//    reads (a block sees its nodes and its input); with none, to its predecessor's.
// 4. Gradient bytes are counted over the backward order, each weight gradient for its
//    producing op only (the scheduler accumulates it at once).
// A forward op with several results (attention: its output and lse) is one node that
// holds them all: they are kept or recomputed together.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/RematChain.h"

#include "bertc/Analysis/StepLiveness.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

using namespace mlir;

namespace bertc {

namespace {

/// A block grows past this many nodes only between cuts; at a cut it ends.
constexpr size_t kMaxBlockNodes = 16;

/// The planner's default slot alignment (-bertc-plan-buffers): every tensor takes a
/// whole number of slots.
constexpr int64_t kSlotAlignment = 256;

int64_t bytesOf(Value value, DimBounds bounds) {
  return alignTo(boundedBytes(cast<RankedTensorType>(value.getType()), bounds), kSlotAlignment);
}

/// The value that stands for `value`'s node: its op's first result.
Value nodeValue(Value value) { return value.getDefiningOp()->getResult(0); }

/// Where a forward value sits in the chain.
struct NodeRef {
  int block;
  int node;
};

class ChainBuilder {
public:
  ChainBuilder(Block &body, DimBounds bounds, const DeviceModel &device)
      : body(body), bounds(bounds), device(device) {}

  FailureOr<RematChain> build() {
    result.forwardOps = forwardOpsOf(body);
    if (failed(splitForward()) || failed(readBackward()))
      return failure();
    return std::move(result);
  }

private:
  /// The operand index a node uses for `value`, or failure if its block cannot see it.
  FailureOr<int> operandIndex(Value value, int block) {
    auto found = refs.find(value);
    if (found == refs.end())
      return failure();
    if (found->second.block == block)
      return found->second.node;
    if (found->second.block == block - 1 && isOutput(found->second))
      return remat::kBlockInput;
    return failure();
  }

  bool isOutput(NodeRef ref) { return ref.node == int(result.chain[ref.block].nodes.size()) - 1; }

  LogicalResult splitForward() {
    SmallVector<Operation *> ops;
    llvm::DenseMap<Value, unsigned> pendingReads;
    for (Operation &op : body)
      if (result.forwardOps.contains(&op) && op.getNumResults() > 0 &&
          isPlannedActivation(op.getResult(0)))
        ops.push_back(&op);
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (isPlannedActivation(operand))
          ++pendingReads[nodeValue(operand)];

    llvm::DenseSet<Value> live;
    bool computeSinceCut = false;
    startBlock(Value());
    for (auto [index, op] : llvm::enumerate(ops)) {
      if (failed(addNode(op)))
        return failure();
      computeSinceCut |= isComputeBound(op, bounds.maxBatch, bounds.maxSeq, device);
      for (Value operand : op->getOperands())
        if (isPlannedActivation(operand) && pendingReads.count(nodeValue(operand)) &&
            --pendingReads[nodeValue(operand)] == 0)
          live.erase(nodeValue(operand));
      Value value = op->getResult(0);
      live.insert(value);
      bool cut = live.size() == 1;
      bool last = index + 1 == ops.size();
      if (last || (cut && (computeSinceCut || current().nodes.size() >= kMaxBlockNodes))) {
        if (!last)
          startBlock(value);
        computeSinceCut = false;
      } else if (cut) {
        computeSinceCut = false;
      }
    }
    return success();
  }

  remat::Block &current() { return result.chain.back(); }

  void startBlock(Value input) {
    remat::Block block;
    if (input) {
      block.inputBytes = bytesOf(input, bounds);
      block.inputOffloadCost = result.chain.back().nodes.back().offloadCost;
    }
    result.chain.push_back(std::move(block));
    result.values.emplace_back();
  }

  LogicalResult addNode(Operation *op) {
    int block = int(result.chain.size()) - 1;
    remat::Node node;
    Value value = op->getResult(0);
    for (Value result : op->getResults())
      node.bytes += bytesOf(result, bounds);
    node.cost =
        int64_t(std::llround(estimateOpSeconds(op, bounds.maxBatch, bounds.maxSeq, device) * 1e12));
    node.recomputable = isPure(op);
    // Down to host memory and back up, where its block offloads what it keeps.
    node.offloadCost = int64_t(std::llround(
        2 * estimateKernelSeconds(bert::hostCopyKernel(double(node.bytes), device.target), device) *
        1e12));
    for (Value operand : op->getOperands()) {
      if (!isPlannedActivation(operand))
        continue;
      FailureOr<int> index = operandIndex(operand, block);
      if (failed(index))
        return failure();
      node.operands.push_back(*index);
    }
    if (auto inPlace = dyn_cast<bert::InPlaceOpInterface>(op))
      for (unsigned operand : inPlace.getReusableOperands()) {
        Value reused = op->getOperand(operand);
        if (isPlannedActivation(reused) && bytesOf(reused, bounds) == node.bytes) {
          node.inPlaceOperand = *operandIndex(reused, block);
          break;
        }
      }
    for (Value result : op->getResults())
      refs[result] = {block, int(current().nodes.size())};
    current().nodes.push_back(std::move(node));
    result.values.back().push_back(value);
    return success();
  }

  /// The latest block that sees `value` (its own, or the next if it is an output).
  int latestSeeing(Value value) {
    NodeRef ref = refs.lookup(value);
    bool seenByNext = isOutput(ref) && ref.block + 1 < int(result.chain.size());
    return ref.block + (seenByNext ? 1 : 0);
  }

  LogicalResult readBackward() {
    // Positions of the backward ops (accumulate_grad aside: it only ends a gradient).
    SmallVector<Operation *> ops;
    llvm::DenseMap<Operation *, int> position;
    for (Operation &op : body.without_terminator())
      if (!result.forwardOps.contains(&op) && !isa<bert::ParamOp, bert::InputOp>(op) &&
          !isa<bert::AccumulateGradOp>(op)) {
        position[&op] = int(ops.size());
        ops.push_back(&op);
      }
    std::vector<int64_t> delta(ops.size() + 1, 0), deltaBefore(ops.size() + 1, 0);
    for (Operation *op : ops)
      for (Value value : op->getResults()) {
        if (!isPlannedActivation(value))
          continue;
        int begin = position[op], end = begin;
        for (Operation *user : value.getUsers())
          if (position.count(user))
            end = std::max(end, position[user]);
        int64_t bytes = bytesOf(value, bounds);
        delta[begin] += bytes;
        delta[end + 1] -= bytes;
        deltaBefore[begin + 1] += bytes;
        deltaBefore[end + 1] -= bytes;
        if (auto inPlace = dyn_cast<bert::InPlaceOpInterface>(op))
          for (unsigned index : inPlace.getReusableOperands()) {
            Value reused = op->getOperand(index);
            auto owner = reused.getDefiningOp();
            if (owner && position.count(owner) && bytesOf(reused, bounds) == bytes &&
                lastBackwardUse(reused, position) == begin) {
              delta[begin] -= bytes;
              delta[begin + 1] += bytes;
              break;
            }
          }
      }
    // The returned loss stays live to the end.
    int64_t lossBytes = bytesOf(body.getTerminator()->getOperand(0), bounds);

    int block = int(result.chain.size()) - 1;
    int64_t live = 0, liveBefore = 0;
    for (Operation *op : ops) {
      live += delta[position[op]];
      liveBefore += deltaBefore[position[op]];
      SmallVector<Value> reads;
      for (Value operand : op->getOperands())
        if (isPlannedActivation(operand) && refs.count(operand))
          reads.push_back(operand);
      int stepBlock = block;
      for (Value read : reads)
        stepBlock = std::min(stepBlock, latestSeeing(read));
      // A step the schedule put after an earlier block's (at a small micro-batch a weight
      // gradient outweighs the activations it reads, and the scheduler defers its GEMM)
      // joins the latest block of its reads; the trial plans measure what that costs.
      if (llvm::any_of(reads, [&](Value read) { return failed(operandIndex(read, stepBlock)); })) {
        stepBlock = 0;
        for (Value read : reads)
          stepBlock = std::max(stepBlock, refs.lookup(read).block);
      } else {
        block = stepBlock;
      }
      remat::BackwardStep step;
      for (Value read : reads) {
        FailureOr<int> index = operandIndex(read, stepBlock);
        if (failed(index))
          return failure();
        if (!llvm::is_contained(step.reads, *index))
          step.reads.push_back(*index);
      }
      step.liveBytes = live + lossBytes;
      step.liveBeforeBytes = liveBefore + lossBytes;
      result.chain[stepBlock].backward.push_back(std::move(step));
    }
    for (size_t l = 1; l < result.chain.size(); ++l) {
      int output = int(result.chain[l - 1].nodes.size()) - 1;
      result.chain[l].inputReadByPreviousBackward =
          llvm::any_of(result.chain[l - 1].backward, [&](const remat::BackwardStep &step) {
            return llvm::is_contained(step.reads, output);
          });
    }
    return success();
  }

  static int lastBackwardUse(Value value, const llvm::DenseMap<Operation *, int> &position) {
    int last = -1;
    for (Operation *user : value.getUsers())
      if (auto found = position.find(user); found != position.end())
        last = std::max(last, found->second);
    return last;
  }

  Block &body;
  DimBounds bounds;
  const DeviceModel &device;
  RematChain result;
  llvm::DenseMap<Value, NodeRef> refs;
};

} // namespace

llvm::DenseSet<Operation *> forwardOpsOf(Block &body) {
  llvm::DenseSet<Operation *> forward;
  SmallVector<Value> work(body.getTerminator()->getOperands());
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (def && forward.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return forward;
}

FailureOr<RematChain> buildRematChain(Block &body, DimBounds bounds, const DeviceModel &device) {
  return ChainBuilder(body, bounds, device).build();
}

} // namespace bertc
