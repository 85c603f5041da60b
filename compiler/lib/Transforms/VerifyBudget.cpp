//===- VerifyBudget.cpp - an independent second check of the plan ---------===//
//
// Re-checks what -bertc-plan-buffers wrote (see Passes.td) from the IR alone: regions
// disjoint (#bert.plan's verifier keeps each inside the arena), every slot inside its region, no
// two live slots sharing a byte, the arena within the budget. It shares only tensor sizes with the
// planner; liveness and the overlap test are its own.
//
//===----------------------------------------------------------------------===//

#include "bert/Placement.h"
#include "bertc/Analysis/KernelWorkspace.h"
#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"
#include "bertc/abi/adamw_8bit_state.h"

#include "llvm/Support/MathExtras.h"

#include <map>
#include <numeric>

namespace bertc {
#define GEN_PASS_DEF_VERIFYBUDGET
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// `offset + bytes`, saturated, so that a corrupt offset still prints.
int64_t endOf(int64_t offset, int64_t bytes) {
  int64_t end;
  return llvm::AddOverflow(offset, bytes, end) ? std::numeric_limits<int64_t>::max() : end;
}

/// A region of `bert.plan`: [begin, end) bytes of the arena.
struct Region {
  StringRef name;
  int64_t begin;
  int64_t end;
};

/// Bytes some op owns from step `firstStep` to `lastStep` (inclusive) of @micro_step.
struct Slot {
  Operation *op;
  std::string what; // "result 0", "workspace", or a parameter's name and slot: "\"w\" grad"
  int64_t begin;
  int64_t end;
  int64_t firstStep;
  int64_t lastStep;
};

/// A slot for a diagnostic: `'bert.gelu' result 0 [2240, 3264)`.
std::string describe(const Slot &slot) {
  return ("'" + slot.op->getName().getStringRef() + "' " + slot.what + " [" + Twine(slot.begin) +
          ", " + Twine(slot.end) + ")")
      .str();
}

/// The region a parameter's slot lies in.
StringLiteral regionOf(ParamSlotKind slot) {
  switch (slot) {
  case ParamSlotKind::Value:
    return "parameters";
  case ParamSlotKind::Master:
    return "master_weights";
  case ParamSlotKind::Grad:
    return "gradients";
  default:
    return "optimizer_state";
  }
}

struct VerifyBudgetPass : bertc::impl::VerifyBudgetBase<VerifyBudgetPass> {
  using VerifyBudgetBase::VerifyBudgetBase;

  // 1. Read `arena_bytes` and the regions (#bert.plan keeps each inside the arena); the
  //    non-empty ones, sorted by offset, must each end before the next begins.
  // 2. Walk @micro_step in program order, numbering its ops (steps). Every parameter
  //    attribute and every input is a slot alive at all steps; every other result is
  //    alive from its op to its last user (the return is the last op, so the loss lives
  //    to the end); an op's `bert.workspace` (KernelWorkspace.h) is alive at its own
  //    step. Each slot must lie inside the arena, then inside its region.
  // 3. Sweep the slots by first step, dropping those whose last step has passed, and
  //    keep the live ones in a map by offset. Live slots are pairwise disjoint, so a new
  //    slot overlaps one of them exactly when it overlaps its neighbour on either side.
  //    A slot that overlaps is reported and left out, which keeps the map disjoint.
  // 4. @optimizer_step's parameters must name the slots of @micro_step's, the plan's
  //    `loss` the slot of the returned value, and `arena_bytes` fit the budget.
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(module);
    FailureOr<bertc::DimBounds> bounds = bertc::getDimBounds(module);
    slots.clear();
    if (failed(microStep) || failed(bounds) || failed(readPlan(module)))
      return signalPassFailure();
    if (microStep->isExternal()) {
      microStep->emitError("@micro_step has no body to check");
      return signalPassFailure();
    }
    ok = checkRegions(module);
    eightBit = bertc::eightBitStateBlocks(module);
    updatedInBackward = bertc::updatesInBackward(module);
    collectSlots(*microStep, *bounds);
    checkLiveOverlaps();
    checkOptimizerStep(module, *microStep);
    checkLoss(module, *microStep);
    // #bert.plan keeps the masters and the optimizer state together on one side of the
    // device arena's end: the host's side exactly when the host runs the optimizer.
    bool optimizerOnHost = bertc::optimizerOnHost(module);
    for (ByteRange range : {plan.getMasterWeights(), plan.getOptimizerState()})
      if (range.bytes > 0 && (range.offset >= plan.getDeviceBytes()) != optimizerOnHost) {
        module.emitError() << "the master weights and optimizer state are in "
                           << (optimizerOnHost ? "device" : "host")
                           << " memory, but the optimizer runs on the "
                           << (optimizerOnHost ? "host" : "device");
        ok = false;
        break;
      }
    if (optimizerOnHost && !updatedInBackward.empty()) {
      module.emitError("the optimizer runs on the host, but @micro_step updates parameters on "
                       "the device");
      ok = false;
    }
    int64_t deviceBytes = plan.getDeviceBytes();
    if (budget > 0 && deviceBytes > budget) {
      module.emitError() << "the plan needs " << deviceBytes << " bytes, over the budget of "
                         << int64_t(budget) << " bytes";
      ok = false;
    }
    if (!ok)
      signalPassFailure();
  }

  /// Step 1: reads `arena_bytes` and the regions, or fails with a diagnostic.
  LogicalResult readPlan(ModuleOp module) {
    FailureOr<PlanAttr> planned = bertc::getPlan(module);
    if (failed(planned))
      return failure();
    plan = *planned;
    arenaBytes = plan.getArenaBytes();
    regions.clear();
    for (auto [name, range] : plan.getRegions())
      regions.push_back({name, range.offset, range.end()});
    return success();
  }

  /// Step 1: whether no two non-empty regions overlap.
  bool checkRegions(ModuleOp module) {
    bool regionsOk = true;
    SmallVector<Region> byOffset;
    llvm::copy_if(regions, std::back_inserter(byOffset),
                  [](const Region &r) { return r.end > r.begin; });
    llvm::stable_sort(byOffset, [](const Region &a, const Region &b) { return a.begin < b.begin; });
    for (size_t i = 1; i < byOffset.size(); ++i) {
      const Region &prev = byOffset[i - 1], &next = byOffset[i];
      if (prev.end > next.begin) {
        module.emitError() << "bert.plan regions '" << prev.name << "' [" << prev.begin << ", "
                           << prev.end << ") and '" << next.name << "' [" << next.begin << ", "
                           << next.end << ") overlap";
        regionsOk = false;
      }
    }
    return regionsOk;
  }

  /// Adds a slot of `bytes` at `offset` if it lies inside the arena and `regionName`.
  void addSlot(Operation *op, std::string what, int64_t offset, int64_t bytes, StringRef regionName,
               int64_t firstStep, int64_t lastStep) {
    Slot slot{op, std::move(what), offset, endOf(offset, bytes), firstStep, lastStep};
    const Region &region =
        *llvm::find_if(regions, [&](const Region &r) { return r.name == regionName; });
    if (offset < 0 || slot.end > arenaBytes) {
      op->emitError() << describe(slot) << " is not inside the arena of " << arenaBytes << " bytes";
      ok = false;
    } else if (offset < region.begin || slot.end > region.end) {
      op->emitError() << describe(slot) << " is not inside the " << region.name << " region ["
                      << region.begin << ", " << region.end << ")";
      ok = false;
    } else if (slot.end > slot.begin && slot.firstStep <= slot.lastStep) {
      slots.push_back(std::move(slot));
    }
  }

  /// Step 2: the slots of @micro_step with their live steps.
  void collectSlots(func::FuncOp microStep, bertc::DimBounds bounds) {
    Block &body = microStep.getBody().front();
    llvm::DenseMap<Operation *, int64_t> step;
    for (Operation &op : body)
      step[&op] = int64_t(step.size());
    int64_t lastStep = int64_t(step.size()) - 1;

    for (Operation &op : body) {
      SmallVector<int64_t> bytes;
      for (Value result : op.getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type) {
          op.emitError() << "'" << op.getName() << "' result " << result.getType()
                         << " is not a ranked tensor: it has no arena size";
          ok = false;
          return;
        }
        bytes.push_back(bertc::boundedBytes(type, bounds));
      }
      if (auto param = dyn_cast<ParamOp>(op)) {
        // The value is in the parameter's storage type (a quantized one's bytes); its
        // master (where it keeps one) and gradient are
        // fp32, its moments fp32 or, with 8-bit state, a code per value and an fp32
        // absmax per block (abi/adamw_8bit_state.h).
        bool hasMaster = bertc::keepsFp32Master(param);
        int64_t count = param.getResult().getType().getNumElements();
        auto block = eightBit.find(param.getName());
        bool isEightBit = block != eightBit.end();
        for (ParamSlotKind slot : kParamSlots) {
          bool isValue = slot == ParamSlotKind::Value, isMaster = slot == ParamSlotKind::Master;
          bool isAbsmax = slot == ParamSlotKind::AdamMAbsmax || slot == ParamSlotKind::AdamVAbsmax;
          bool isMoment = isAbsmax || slot == ParamSlotKind::AdamM || slot == ParamSlotKind::AdamV;
          bool needed = isValue || ((isMaster ? hasMaster : param.getTrainable()) &&
                                    (!isAbsmax || isEightBit));
          // An update in the backward reads its gradient from an activation.
          if (slot == ParamSlotKind::Grad && updatedInBackward.contains(param.getName()))
            needed = false;
          int64_t slotBytes = 4 * count;
          if (isValue)
            slotBytes = bytes[0];
          else if (isAbsmax)
            slotBytes =
                isEightBit ? 4 * bertc::quantBlockCount(count, bertc::QuantBlockSize(block->second))
                           : 0;
          else if (isMoment && isEightBit)
            slotBytes = count;
          FailureOr<int64_t> offset = getParamSlot(param, slot);
          // A frozen parameter's master: in host memory when the plan keeps them there.
          bool hostMaster = isMaster && !param.getTrainable() && plan.getFrozenMasters().bytes > 0;
          // An embedding table in host memory.
          bool hostValue = isValue && valueInHostMemory(param);
          StringRef region = hostMaster  ? "frozen_masters"
                             : hostValue ? "host_parameters"
                                         : regionOf(slot);
          if (succeeded(offset))
            addSlot(&op, ("\"" + param.getName() + "\" " + slotName(slot)).str(), *offset,
                    slotBytes, region, 0, lastStep);
          else if (needed) {
            op.emitError() << "'bert.param' \"" << param.getName() << "\" has no " << slotName(slot)
                           << " slot";
            ok = false;
          }
        }
        continue;
      }
      // A kernel's workspace is its own while it runs (a slot of the scratch region).
      if (int64_t workspace = bertc::kernelWorkspaceBytes(&op, bounds); workspace > 0) {
        if (FailureOr<int64_t> offset = getWorkspaceOffset(&op); succeeded(offset)) {
          addSlot(&op, "workspace", *offset, workspace, "scratch", step[&op], step[&op]);
        } else {
          op.emitError() << "'" << op.getName() << "' has no workspace slot (bert.workspace)";
          ok = false;
        }
      }
      if (op.getNumResults() == 0)
        continue;
      SmallVector<int64_t> offsets;
      for (OpResult result : op.getResults())
        if (FailureOr<int64_t> offset = getResultOffset(result); succeeded(offset))
          offsets.push_back(*offset);
      if (offsets.size() != op.getNumResults()) {
        op.emitError() << "'" << op.getName() << "' needs bert.offsets with one offset per "
                       << "result (" << op.getNumResults() << ")";
        ok = false;
        continue;
      }
      bool isInput = isa<InputOp>(op);
      StringRef resultRegion = isInput              ? "inputs"
                               : isa<OffloadOp>(op) ? "host_activations"
                                                    : "activations";
      for (auto [index, result] : llvm::enumerate(op.getResults())) {
        int64_t lastUse = step[&op];
        for (Operation *user : result.getUsers())
          if (Operation *top = body.findAncestorOpInBlock(*user))
            lastUse = std::max(lastUse, step[top]);
        int64_t firstStep = isInput ? 0 : step[&op];
        if (index == 0 && takesOverOperand(op, offsets[index], bytes[index], step[&op]))
          ++firstStep; // at this op the bytes are still the operand's, checked as such
        size_t before = slots.size();
        addSlot(&op, "result " + std::to_string(index), offsets[index], bytes[index], resultRegion,
                firstStep, isInput ? lastStep : lastUse);
        if (slots.size() > before)
          slotOfValue[result] = before;
      }
    }
  }

  /// Whether the first result of in-place `op` at [offset, offset + bytes) is exactly
  /// the slot of a reusable operand whose last use is `opStep`: then the result owns
  /// those bytes only after the op.
  bool takesOverOperand(Operation &op, int64_t offset, int64_t bytes, int64_t opStep) const {
    auto inPlace = dyn_cast<InPlaceOpInterface>(op);
    if (!inPlace)
      return false;
    for (unsigned index : inPlace.getReusableOperands()) {
      auto found = slotOfValue.find(op.getOperand(index));
      if (found == slotOfValue.end())
        continue;
      const Slot &operand = slots[found->second];
      if (operand.lastStep == opStep && operand.begin == offset &&
          operand.end == endOf(offset, bytes))
        return true;
    }
    return false;
  }

  /// Step 3: reports each slot that shares a byte with a slot alive at a common step.
  void checkLiveOverlaps() {
    std::vector<size_t> byFirstStep(slots.size());
    std::iota(byFirstStep.begin(), byFirstStep.end(), 0);
    std::vector<size_t> byLastStep = byFirstStep;
    llvm::stable_sort(byFirstStep,
                      [&](size_t a, size_t b) { return slots[a].firstStep < slots[b].firstStep; });
    llvm::stable_sort(byLastStep,
                      [&](size_t a, size_t b) { return slots[a].lastStep < slots[b].lastStep; });

    std::map<int64_t, size_t> live; // offset -> slot; the slots are pairwise disjoint
    size_t expired = 0;
    for (size_t index : byFirstStep) {
      const Slot &slot = slots[index];
      for (; expired < byLastStep.size() && slots[byLastStep[expired]].lastStep < slot.firstStep;
           ++expired) {
        auto it = live.find(slots[byLastStep[expired]].begin);
        if (it != live.end() && it->second == byLastStep[expired])
          live.erase(it);
      }
      auto after = live.lower_bound(slot.begin);
      const Slot *conflict = nullptr;
      if (after != live.end() && slots[after->second].begin < slot.end)
        conflict = &slots[after->second];
      else if (after != live.begin() && slots[std::prev(after)->second].end > slot.begin)
        conflict = &slots[std::prev(after)->second];
      if (!conflict) {
        live.emplace(slot.begin, index);
        continue;
      }
      InFlightDiagnostic diag = slot.op->emitError();
      diag << describe(slot) << " overlaps live " << describe(*conflict);
      diag.attachNote(conflict->op->getLoc()) << "the live slot is defined here";
      ok = false;
    }
  }

  /// Step 4: @optimizer_step updates the very slots @micro_step reads and accumulates.
  void checkOptimizerStep(ModuleOp module, func::FuncOp microStep) {
    llvm::StringMap<ParamOp> byName;
    microStep.walk([&](ParamOp p) { byName[p.getName()] = p; });
    auto optimizerStep = module.lookupSymbol<func::FuncOp>(bertc::kOptimizerStep);
    if (!optimizerStep)
      return;
    optimizerStep.walk([&](ParamOp p) {
      ParamOp original = byName.lookup(p.getName());
      if (!original) {
        p.emitError() << "'bert.param' \"" << p.getName() << "\" is not in @micro_step";
        ok = false;
        return;
      }
      for (ParamSlotKind slot : kParamSlots) {
        FailureOr<int64_t> offset = getParamSlot(p, slot);
        FailureOr<int64_t> planned = getParamSlot(original, slot);
        if (succeeded(offset) == succeeded(planned) && (failed(offset) || *offset == *planned))
          continue;
        p.emitError() << "'bert.param' \"" << p.getName() << "\" " << slotName(slot)
                      << " slot differs from @micro_step's";
        ok = false;
      }
    });
  }

  /// Step 4: the plan's `loss` is where the returned value lives.
  void checkLoss(ModuleOp module, func::FuncOp microStep) {
    Operation *ret = microStep.getBody().front().getTerminator();
    auto loss = ret->getNumOperands() == 1 ? dyn_cast<OpResult>(ret->getOperand(0)) : nullptr;
    FailureOr<int64_t> offset = loss ? getResultOffset(loss) : FailureOr<int64_t>(failure());
    if (failed(offset) || *offset != plan.getLoss()) {
      module.emitError("bert.plan 'loss' is not the offset of the value @micro_step returns");
      ok = false;
    }
  }

  PlanAttr plan;
  int64_t arenaBytes = 0;
  SmallVector<Region> regions;
  /// `state_block` of the parameters with 8-bit AdamW state, by name.
  llvm::StringMap<int64_t> eightBit;
  /// The parameters updated in @micro_step's backward, without a gradient slot.
  llvm::StringSet<> updatedInBackward;
  std::vector<Slot> slots;
  llvm::DenseMap<Value, size_t> slotOfValue; ///< activation results and their slots
  bool ok = true;
};

} // namespace
