//===- Rematerialize.cpp - recompute in the backward to meet a budget -----===//
//
// Chooses what the backward recomputes (see Passes.td): the chain model and the exact
// solver propose, the real planner (on a copy of the module) decides, and the chosen
// ops are cloned into the backward before their first readers.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/RematChain.h"
#include "bertc/Analysis/StepMemory.h"
#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"
#include "bertc/Transforms/Pipeline.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"

namespace bertc {
#define GEN_PASS_DEF_REMATERIALIZE
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;

namespace {

/// Solver runs after the first, each with the model's budget lowered by what the real
/// plan exceeded: the model misses alignment and packing gaps, a few percent.
constexpr int kMaxTightenings = 8;

/// The forward values a solution recomputes, in forward order.
SmallVector<Value> recomputedValues(const bertc::RematChain &model,
                                    const bertc::remat::Evaluation &evaluation) {
  SmallVector<Value> values;
  for (auto [blockValues, recomputed] : llvm::zip(model.values, evaluation.recomputed))
    for (auto [value, isRecomputed] : llvm::zip(blockValues, recomputed))
      if (isRecomputed)
        values.push_back(value);
  return values;
}

/// Clones the op of each of `values` (in forward order) just before its first reader in
/// the backward, a reader being a backward op or the clone of another of `values`, and
/// makes the backward read the clones. A value stands for every result of its op (an
/// attention's output and lse are recomputed together). Returns the clones.
SmallVector<Operation *> cloneIntoBackward(Block &body, ArrayRef<Value> values) {
  llvm::DenseSet<Operation *> forward = bertc::forwardOpsOf(body);
  forward.insert(body.getTerminator()); // the returned loss is never recomputed
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = unsigned(index);
  auto earlier = [&](Operation *a, Operation *b) { return !b || (a && position[a] < position[b]); };
  // 1. Where each clone goes: before its first backward reader or before the place of
  //    a clone that reads it, found from the last value back.
  llvm::DenseMap<Value, Operation *> place;
  llvm::DenseSet<Operation *> recomputedOps;
  for (Value value : values)
    recomputedOps.insert(value.getDefiningOp());
  for (Value value : llvm::reverse(values)) {
    Operation *first = nullptr;
    for (Operation *user : value.getDefiningOp()->getUsers()) {
      Operation *candidate = !forward.contains(user)        ? user
                             : recomputedOps.contains(user) ? place.lookup(user->getResult(0))
                                                            : nullptr;
      if (candidate && earlier(candidate, first))
        first = candidate;
    }
    place[value] = first;
  }
  // 2. Clone in forward order (operands before their readers at the same place).
  IRMapping clones;
  SmallVector<Operation *> created;
  OpBuilder builder(body.getParentOp()->getContext());
  for (Value value : values) {
    Operation *before = place.lookup(value);
    if (!before)
      continue;
    builder.setInsertionPoint(before);
    Operation *clone = builder.clone(*value.getDefiningOp(), clones);
    clone->setAttr(bertc::kRecomputed, builder.getUnitAttr());
    value.getDefiningOp()->replaceUsesWithIf(clone->getResults(), [&](OpOperand &use) {
      return !forward.contains(use.getOwner()) && use.getOwner() != clone;
    });
    created.push_back(clone);
  }
  return created;
}

/// How much of what the backward reads may wait in host memory (offload-checkpoints), the
/// most first: what every block but the last keeps for its backward, its input included
/// (the last block's backward follows its forward at once); the blocks' inputs alone;
/// nothing.
enum class OffloadScope { Kept, Inputs, None };

/// Marks what `scope` offloads in `model` for the solver and returns the candidates: every
/// result of the blocks' ops but their outputs (with OffloadScope::Kept), and the blocks'
/// inputs (the first block has none), unless the previous block's backward reads one too.
/// What the backward reads of them after the recomputation is offloaded.
SmallVector<Value> markOffloadCandidates(bertc::RematChain &model, OffloadScope scope) {
  SmallVector<Value> candidates;
  for (size_t l = 0; l < model.chain.size(); ++l) {
    bertc::remat::Block &block = model.chain[l];
    bool last = l + 1 == model.chain.size();
    block.offloadKept = scope == OffloadScope::Kept && !last;
    block.inputOffloaded = scope != OffloadScope::None && !last && l > 0 && block.inputBytes > 0 &&
                           !block.inputReadByPreviousBackward;
    if (block.offloadKept)
      for (Value node : ArrayRef<Value>(model.values[l]).drop_back())
        llvm::append_range(candidates, node.getDefiningOp()->getResults());
    if (block.inputOffloaded)
      candidates.push_back(model.values[l - 1].back());
  }
  return candidates;
}

/// Sends each of `checkpoints` that the backward reads to host memory: a `bert.offload`
/// right after its definer (the copy starts as soon as the tensor exists, and its last
/// forward reader may still take its bytes in place), a `bert.reload` just before its first
/// backward reader, which with every later one reads the reloaded tensor.
void offloadCheckpoints(Block &body, ArrayRef<Value> checkpoints) {
  llvm::DenseSet<Operation *> forward = bertc::forwardOpsOf(body);
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = unsigned(index);
  OpBuilder builder(body.getParentOp()->getContext());
  for (Value checkpoint : checkpoints) {
    // Offloaded already (the step was planned before): it stays as it is.
    if (checkpoint.getDefiningOp<bert::ReloadOp>() ||
        llvm::any_of(checkpoint.getUsers(),
                     [](Operation *user) { return isa<bert::OffloadOp>(user); }))
      continue;
    Operation *firstBackward = nullptr;
    for (Operation *user : checkpoint.getUsers())
      if (!forward.contains(user) && (!firstBackward || position[user] < position[firstBackward]))
        firstBackward = user;
    if (!firstBackward)
      continue;
    builder.setInsertionPointAfter(checkpoint.getDefiningOp());
    auto offload =
        builder.create<bert::OffloadOp>(checkpoint.getLoc(), checkpoint.getType(), checkpoint);
    builder.setInsertionPoint(firstBackward);
    auto reload =
        builder.create<bert::ReloadOp>(checkpoint.getLoc(), checkpoint.getType(), offload);
    checkpoint.replaceUsesWithIf(reload, [&](OpOperand &use) {
      return !forward.contains(use.getOwner()) && use.getOwner() != offload;
    });
  }
}

/// The arena a module plans to and what its regions other than the activations take.
struct PlannedArena {
  int64_t arenaBytes = 0;
  int64_t fixedBytes = 0;
  int64_t hostBytes = 0; ///< what it offloads to host memory (offloadHostBytes)
};

/// What the search chose: the values the backward recomputes, whether their plan fits,
/// and its device arena.
struct Searched {
  SmallVector<Value> recomputed;
  bool fits = false;
  int64_t arenaBytes = 0;
};

struct RematerializePass : bertc::impl::RematerializeBase<RematerializePass> {
  using RematerializeBase::RematerializeBase;

  void runOnOperation() override {
    if (arenaBudget <= 0)
      return;
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(module);
    FailureOr<bertc::DimBounds> bounds = bertc::getDimBounds(module);
    if (failed(microStep) || failed(bounds))
      return signalPassFailure();
    Block &body = microStep->getBody().front();
    FailureOr<PlannedArena> asIs = planWith({});
    if (failed(asIs))
      return signalPassFailure();
    if (asIs->arenaBytes <= arenaBudget && !offloadCheckpoints)
      return;
    // The model reads the backward in the order the scheduler gives it (which, for
    // one, accumulates each weight gradient as soon as it exists); the scheduler runs
    // again after the clones are placed.
    OpPassManager schedule(ModuleOp::getOperationName());
    schedule.addPass(bertc::createScheduleForMemory());
    if (failed(runPipeline(schedule, module)))
      return signalPassFailure();
    // A step that does not read as a chain keeps everything; the driver reports it.
    FailureOr<bertc::RematChain> model =
        bertc::buildRematChain(body, *bounds, bertc::deviceModel(arch));
    if (failed(model))
      return;
    // The most that may wait in host memory whose plan fits, host memory included; where
    // none fits, the scope of the smallest plan.
    std::optional<std::pair<OffloadScope, Searched>> chosen;
    static constexpr OffloadScope kScopes[] = {OffloadScope::Kept, OffloadScope::Inputs,
                                               OffloadScope::None};
    for (OffloadScope scope : ArrayRef(kScopes).drop_front(offloadCheckpoints ? 0 : 2)) {
      checkpoints = markOffloadCandidates(*model, scope);
      FailureOr<Searched> found = search(*model, *asIs);
      if (failed(found))
        return signalPassFailure();
      if (!chosen || found->fits || found->arenaBytes < chosen->second.arenaBytes)
        chosen = {scope, *found};
      if (found->fits)
        break;
    }
    checkpoints = markOffloadCandidates(*model, chosen->first);
    Searched &searched = chosen->second;
    if (!searched.recomputed.empty())
      record(cloneIntoBackward(body, searched.recomputed), *bounds,
             bertc::deviceModel(arch).target);
    ::offloadCheckpoints(body, checkpoints);
  }

  /// The tensors sent to host memory between the forward and the backward.
  SmallVector<Value> checkpoints;

  /// The cheapest recomputation whose real plan fits (its arena, and its host memory within
  /// host-budget); if none does, the one whose plan is smallest (empty if none beats
  /// keeping everything). The solver runs with the
  /// model's budget lowered by each excess; when that finds nothing that fits, the plan
  /// of lowest modelled peak is tried last, so that whenever that plan fits, the result
  /// does (which keeps "fits" monotone in the micro-batch for the drivers' searches).
  FailureOr<Searched> search(const bertc::RematChain &model, const PlannedArena &asIs) {
    Searched best{{}, false, asIs.arenaBytes};
    int64_t bestArena = asIs.arenaBytes;
    // Plans `solution`, keeping it when it fits or its arena is the smallest yet; returns
    // the arena. A plan whose host memory is over host-budget fits nowhere.
    auto tryPlan = [&](const bertc::remat::Solution &solution) -> FailureOr<int64_t> {
      SmallVector<Value> values = recomputedValues(model, solution.evaluation);
      FailureOr<PlannedArena> planned = planWith(values);
      if (failed(planned))
        return failure();
      if (hostBudget > 0 && planned->hostBytes > hostBudget)
        return std::numeric_limits<int64_t>::max();
      bool fits = planned->arenaBytes <= arenaBudget;
      if (fits || planned->arenaBytes < bestArena) {
        best = {values, fits, planned->arenaBytes};
        bestArena = planned->arenaBytes;
      }
      return planned->arenaBytes;
    };
    int64_t modelBudget = arenaBudget - asIs.fixedBytes;
    for (int attempt = 0; attempt <= kMaxTightenings && modelBudget > 0; ++attempt) {
      std::optional<bertc::remat::Solution> solution =
          bertc::remat::solveWithinBudget(model.chain, modelBudget);
      if (!solution)
        break;
      FailureOr<int64_t> arena = tryPlan(*solution);
      if (failed(arena))
        return failure();
      if (*arena <= arenaBudget)
        return best;
      modelBudget =
          std::min(solution->evaluation.peakBytes - 1, modelBudget - (*arena - arenaBudget));
    }
    if (failed(tryPlan(bertc::remat::solveLowestPeak(model.chain))))
      return failure();
    return best;
  }

  /// Plans a copy of the module with `values` recomputed, through the real scheduler
  /// and planner. The copy is nested in the module while it is planned (a pass may run
  /// a pipeline only on what it owns), then erased.
  FailureOr<PlannedArena> planWith(ArrayRef<Value> values) {
    ModuleOp module = getOperation();
    IRMapping mapping;
    auto copy = cast<ModuleOp>(module->clone(mapping));
    module.getBody()->push_back(copy);
    auto copied = [&](ArrayRef<Value> originals) {
      return llvm::map_to_vector(originals, [&](Value value) { return mapping.lookup(value); });
    };
    Block &body = (*bertc::getMicroStep(copy)).getBody().front();
    cloneIntoBackward(body, copied(values));
    ::offloadCheckpoints(body, copied(checkpoints));
    bool gpu = bertc::deviceModel(arch).target == bert::CostTarget::Cuda;
    OpPassManager pipeline(ModuleOp::getOperationName());
    bertc::addPlanningPasses(pipeline,
                             {fuseOptimizer, gemmWorkspace, offloadOptimizer, hostFrozenMasters,
                              bertc::trainerTarget(gemmWorkspace), hostEmbeddings});
    LogicalResult planned = runPipeline(pipeline, copy);
    bert::PlanAttr plan = bertc::findPlan(copy);
    copy.erase();
    if (failed(planned) || !plan)
      return failure();
    return PlannedArena{plan.getDeviceBytes(),
                        plan.getActivations().offset + plan.getGemmWorkspace().bytes,
                        bertc::offloadHostBytes(plan, /*hostCopies=*/gpu)};
  }

  /// `bert.recompute`: one entry per clone, with its FLOPs per micro-step.
  void record(ArrayRef<Operation *> clones, bertc::DimBounds bounds, bert::CostTarget target) {
    Builder b(&getContext());
    SmallVector<Attribute> entries;
    for (Operation *clone : clones) {
      std::string name, origin;
      bertc::describeLocation(clone->getLoc(), name, origin);
      int64_t flops =
          int64_t(bertc::estimateOpFlops(clone, bounds.maxBatch, bounds.maxSeq, target));
      entries.push_back(b.getDictionaryAttr({
          b.getNamedAttr("op", b.getStringAttr(clone->getName().getStringRef())),
          b.getNamedAttr("name", b.getStringAttr(name)),
          b.getNamedAttr("origin", b.getStringAttr(origin)),
          b.getNamedAttr("flops", b.getI64IntegerAttr(flops)),
      }));
    }
    getOperation()->setAttr("bert.recompute", b.getArrayAttr(entries));
  }
};

} // namespace
