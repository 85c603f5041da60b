//===- ScheduleForMemory.cpp - an op order with a lower peak --------------===//
//
// Reorders @micro_step by greedy list scheduling (see Passes.td) and keeps the new
// order only when its peak of live activation bytes is lower than the original's.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/StepLiveness.h"
#include "bertc/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace bertc {
#define GEN_PASS_DEF_SCHEDULEFORMEMORY
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;

namespace {

/// The ops of `body` before its terminator, each with the ops it must follow: the
/// definers of its operands; for an op with side effects, the previous such op
/// (accumulate_grad and updates in the backward excepted); for an update in the
/// backward, every other reader of the parameter it rewrites.
struct DependenceGraph {
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, unsigned> index;
  std::vector<SmallVector<unsigned>> successors;
  std::vector<unsigned> pendingPredecessors;

  explicit DependenceGraph(Block &body) {
    for (Operation &op : body.without_terminator()) {
      index[&op] = ops.size();
      ops.push_back(&op);
    }
    successors.resize(ops.size());
    pendingPredecessors.assign(ops.size(), 0);
    std::optional<unsigned> lastEffect;
    for (auto [i, op] : llvm::enumerate(ops)) {
      llvm::SmallSetVector<unsigned, 4> predecessors;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp(); def && index.count(def))
          predecessors.insert(index[def]);
      // An accumulation writes only its own parameters' gradient slots, an update in the
      // backward only its own parameter's slots: those commute.
      auto update = dyn_cast<bert::AdamWOp>(op);
      bool ownSlotsOnly =
          isa<bert::AccumulateGradOp, bert::AccumulateLinearGradWeightOp,
              bert::AccumulateBiasGradOp, bert::AccumulateEmbeddingGradOp,
              bert::AccumulateLayerNormGradOp, bert::AccumulateLmHeadLossGradOp>(op) ||
          (update && update.getGrad());
      if (update && update.getGrad())
        for (Operation *reader : update.getParam().getUsers())
          if (reader != op && index.count(reader))
            predecessors.insert(index[reader]);
      // A reload stays after the op before it (-bertc-rematerialize puts it just before
      // its first reader): hoisted, it would hold its tensor on the device again.
      if (isa<bert::ReloadOp>(op) && i > 0)
        predecessors.insert(i - 1);
      if (!isMemoryEffectFree(op) && !ownSlotsOnly) {
        if (lastEffect)
          predecessors.insert(*lastEffect);
        lastEffect = i;
      }
      for (unsigned p : predecessors)
        successors[p].push_back(i);
      pendingPredecessors[i] = predecessors.size();
    }
  }
};

/// Whether `value` is a gradient read only by its accumulation. Such a gradient is not
/// priced as an allocation: -bertc-accumulate-in-gemm folds it into its parameter's slot,
/// or the fused update right after it reads and frees it. Priced, it would postpone every
/// weight-gradient GEMM, and with them the activations they read, to the end.
bool onlyAccumulated(Value value) {
  return value.hasOneUse() && isa<bert::AccumulateGradOp>(*value.getUsers().begin());
}

/// Greedy list scheduling: among the ops whose predecessors are scheduled, take the
/// one that frees the most activation bytes net of what it allocates (ties: the
/// earliest in the original order).
SmallVector<Operation *> greedyOrder(Block &body, bertc::DimBounds bounds) {
  DependenceGraph graph(body);
  auto bytesOf = [&](Value v) {
    return bertc::boundedBytes(cast<RankedTensorType>(v.getType()), bounds);
  };
  llvm::DenseMap<Value, unsigned> unscheduledUsers;
  Operation *terminator = body.getTerminator();
  for (Operation *op : graph.ops)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (user != terminator)
          ++unscheduledUsers[result];
  auto netFreed = [&](Operation *op) {
    // An offload runs as soon as its tensor exists: the tensor's last forward reader may
    // then still take its bytes in place.
    if (isa<bert::OffloadOp>(op))
      return std::numeric_limits<int64_t>::max();
    int64_t net = 0;
    llvm::SmallPtrSet<Value, 4> seen;
    for (Value operand : op->getOperands()) {
      if (!bertc::isPlannedActivation(operand) || !seen.insert(operand).second)
        continue;
      unsigned uses = llvm::count(op->getOperands(), operand);
      if (unscheduledUsers.lookup(operand) == uses &&
          !llvm::is_contained(terminator->getOperands(), operand))
        net += bytesOf(operand);
    }
    for (Value result : op->getResults())
      if (bertc::isPlannedActivation(result) && !onlyAccumulated(result))
        net -= bytesOf(result);
    return net;
  };

  std::set<unsigned> ready;
  for (unsigned i = 0; i < graph.ops.size(); ++i)
    if (graph.pendingPredecessors[i] == 0)
      ready.insert(i);
  SmallVector<Operation *> order;
  while (!ready.empty()) {
    unsigned best = *ready.begin();
    int64_t bestScore = netFreed(graph.ops[best]);
    for (unsigned candidate : ready) {
      int64_t score = netFreed(graph.ops[candidate]);
      if (score > bestScore) {
        best = candidate;
        bestScore = score;
      }
    }
    ready.erase(best);
    Operation *op = graph.ops[best];
    order.push_back(op);
    for (Value operand : op->getOperands())
      if (unscheduledUsers.count(operand))
        --unscheduledUsers[operand];
    for (unsigned next : graph.successors[best])
      if (--graph.pendingPredecessors[next] == 0)
        ready.insert(next);
  }
  return order;
}

/// Peak live bytes of the block's current order, in-place chains counted once.
int64_t peakOf(Block &body, bertc::DimBounds bounds) {
  return bertc::maxLiveBytes(
      bertc::intervalsOf(bertc::coalesceInPlace(bertc::activationLifetimes(body, bounds))));
}

void applyOrder(Block &body, ArrayRef<Operation *> order) {
  for (Operation *op : order)
    op->moveBefore(body.getTerminator());
}

struct ScheduleForMemoryPass : bertc::impl::ScheduleForMemoryBase<ScheduleForMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(module);
    FailureOr<bertc::DimBounds> bounds = bertc::getDimBounds(module);
    if (failed(microStep) || failed(bounds))
      return signalPassFailure();
    Block &body = microStep->getBody().front();
    SmallVector<Operation *> original;
    for (Operation &op : body.without_terminator())
      original.push_back(&op);
    int64_t originalPeak = peakOf(body, *bounds);
    applyOrder(body, greedyOrder(body, *bounds));
    if (peakOf(body, *bounds) >= originalPeak)
      applyOrder(body, original);
  }
};

} // namespace
