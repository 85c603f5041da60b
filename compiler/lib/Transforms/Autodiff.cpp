//===- Autodiff.cpp - reverse-mode differentiation of @micro_step ---------===//
//
// A generic driver over GradientOpInterface (see Passes.td for the algorithm).
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace bertc {
#define GEN_PASS_DEF_AUTODIFF
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// Values that depend on a trainable parameter, found in one forward sweep.
llvm::DenseSet<Value> valuesNeedingGradients(func::FuncOp func) {
  llvm::DenseSet<Value> active;
  func.walk([&](Operation *op) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      if (param.getTrainable())
        active.insert(param.getResult());
      return;
    }
    if (llvm::any_of(op->getOperands(), [&](Value v) { return active.contains(v); }))
      for (Value result : op->getResults())
        if (isa<FloatType>(cast<ShapedType>(result.getType()).getElementType()))
          active.insert(result);
  });
  return active;
}

struct AutodiffPass : bertc::impl::AutodiffBase<AutodiffPass> {
  void runOnOperation() override {
    FailureOr<func::FuncOp> func = bertc::getMicroStep(getOperation());
    if (failed(func))
      return signalPassFailure();
    auto ret = cast<func::ReturnOp>(func->getBody().front().getTerminator());
    if (ret.getNumOperands() != 1) {
      ret.emitError("@micro_step must return exactly the loss");
      return signalPassFailure();
    }
    if (failed(differentiate(*func, ret)))
      signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp func, func::ReturnOp ret) {
    llvm::DenseSet<Value> active = valuesNeedingGradients(func);
    SmallVector<Operation *> forward;
    for (Operation &op : func.getBody().front().without_terminator())
      forward.push_back(&op);

    OpBuilder builder(ret);
    Value loss = ret.getOperand(0);
    llvm::DenseMap<Value, Value> grads;
    grads[loss] =
        builder.create<FillOp>(loss.getLoc(), loss.getType(), builder.getF32FloatAttr(1.0f));

    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> resultGrads;
      for (Value result : op->getResults())
        resultGrads.push_back(grads.lookup(result));
      if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
        continue;
      SmallVector<bool> needed;
      for (Value operand : op->getOperands())
        needed.push_back(active.contains(operand));
      if (llvm::none_of(needed, [](bool n) { return n; }))
        continue;
      auto rule = dyn_cast<GradientOpInterface>(op);
      if (!rule)
        return op->emitError("op has no gradient rule, but a trainable parameter "
                             "flows through it");
      SmallVector<Value> operandGrads = rule.buildGradients(builder, resultGrads, needed);
      for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
        if (!grad)
          continue;
        Value &sum = grads[operand];
        sum =
            sum ? builder.create<AddOp>(op->getLoc(), sum.getType(), sum, grad).getResult() : grad;
      }
    }

    // A trainable parameter without a path to the loss gets no gradient: it is frozen, as
    // PyTorch's AdamW skips a parameter whose grad stays None (no decay, no state). One
    // warning per group says so.
    llvm::StringSet<> unreachableGroups;
    for (Operation *op : forward) {
      auto param = dyn_cast<ParamOp>(op);
      if (!param || !param.getTrainable())
        continue;
      if (Value grad = grads.lookup(param.getResult())) {
        builder.create<AccumulateGradOp>(param.getLoc(), param.getResult(), grad);
        continue;
      }
      param.setTrainable(false);
      if (unreachableGroups.insert(param.getGroup()).second)
        param.emitWarning() << "parameter '" << param.getName() << "' (group '" << param.getGroup()
                            << "') has no path to the loss: it gets no gradient and no optimizer "
                               "state and keeps its starting value, as in PyTorch";
    }
    return success();
  }
};

} // namespace
