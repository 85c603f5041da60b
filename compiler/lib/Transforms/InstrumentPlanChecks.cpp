//===- InstrumentPlanChecks.cpp - what each op reads, defines, releases ---===//
//
// Puts plan-check ops around every op of the step functions (see Passes.td), in three
// steps per function:
//   1. find each planned activation's last user (its definer when it has none);
//   2. before each op, a read of each planned operand;
//   3. after it, a define of each result, then a release of each operand and each
//      result whose last user it is, unless the function returns it or (an in-place
//      result) a result took over its bytes.
//
//===----------------------------------------------------------------------===//

#include "bert/Placement.h"
#include "bertc/Analysis/StepLiveness.h"
#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace bertc {
#define GEN_PASS_DEF_INSTRUMENTPLANCHECKS
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// The name of @eval_step's reader of its logits: the trainer's evalStep, which copies
/// them out after the step's ops.
constexpr llvm::StringLiteral kLogitsReader = "evalStep";

/// The arena offset of an op result, -1 for parameters and inputs.
int64_t arenaOffset(Value value) {
  auto result = dyn_cast<OpResult>(value);
  FailureOr<int64_t> offset = result ? getResultOffset(result) : FailureOr<int64_t>(failure());
  return succeeded(offset) && bertc::isPlannedActivation(value) ? *offset : -1;
}

/// The last op of `block` that uses each planned activation (its definer if none).
llvm::DenseMap<Value, Operation *> lastUsers(Block &block) {
  llvm::DenseMap<Value, Operation *> last;
  for (Operation &op : block) {
    for (Value result : op.getResults())
      if (bertc::isPlannedActivation(result))
        last[result] = &op;
    for (Value operand : op.getOperands())
      if (bertc::isPlannedActivation(operand))
        last[operand] = &op;
  }
  return last;
}

/// The checks after `op`: its results defined, then the tensors it used last released.
void instrumentAfter(Operation &op, ValueRange keepAlive,
                     const llvm::DenseMap<Value, Operation *> &last, OpBuilder &builder) {
  builder.setInsertionPointAfter(&op);
  Location loc = op.getLoc();
  for (Value result : op.getResults())
    if (bertc::isPlannedActivation(result)) // not an offloaded tensor's host copy
      builder.create<PlanCheckDefineOp>(loc, result);
  llvm::SmallPtrSet<Value, 4> released;
  auto release = [&](Value value) {
    if (llvm::is_contained(keepAlive, value) || last.lookup(value) != &op ||
        !released.insert(value).second)
      return;
    builder.create<PlanCheckReleaseOp>(loc, value);
  };
  // An in-place result took over its dying operand's bytes: they are not released.
  auto takenOver = [&](Value operand) {
    return llvm::any_of(op.getResults(),
                        [&](Value result) { return arenaOffset(result) == arenaOffset(operand); });
  };
  for (Value operand : op.getOperands())
    if (bertc::isPlannedActivation(operand) && !takenOver(operand))
      release(operand);
  for (Value result : op.getResults())
    release(result);
}

void instrument(func::FuncOp func) {
  Block &body = func.getBody().front();
  llvm::DenseMap<Value, Operation *> last = lastUsers(body);
  Operation *terminator = body.getTerminator();
  ValueRange returned = terminator->getOperands();
  OpBuilder builder(func.getContext());
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    if (isa<ParamOp, InputOp>(op))
      continue;
    builder.setInsertionPoint(&op);
    for (Value operand : op.getOperands())
      if (bertc::isPlannedActivation(operand))
        builder.create<PlanCheckReadOp>(op.getLoc(), operand,
                                        builder.getStringAttr(op.getName().getStringRef()));
    instrumentAfter(op, returned, last, builder);
  }
  if (func.getSymName() == bertc::kEvalStep && terminator->getNumOperands() == 2) {
    builder.setInsertionPoint(terminator);
    builder.create<PlanCheckReadOp>(terminator->getLoc(), terminator->getOperand(1),
                                    builder.getStringAttr(kLogitsReader));
  }
}

struct InstrumentPlanChecksPass : bertc::impl::InstrumentPlanChecksBase<InstrumentPlanChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!bertc::findPlan(module)) {
      module.emitError("the module has no memory plan to check: run -bertc-plan-buffers first");
      return signalPassFailure();
    }
    if (hasPlanChecks(module))
      return;
    for (auto func : module.getOps<func::FuncOp>())
      instrument(func);
  }
};

} // namespace
