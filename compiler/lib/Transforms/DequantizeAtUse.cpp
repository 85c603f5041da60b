//===- DequantizeAtUse.cpp - one dequantization per reader ----------------===//
//
// A dequantized weight read by several GEMMs (the forward's, the backward's input
// gradient) is dequantized again right before each, so that none lives across the step
// (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

namespace bertc {
#define GEN_PASS_DEF_DEQUANTIZEATUSE
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// Leaves `dequantize` to its first reader in program order and gives every other
/// reader a clone placed right before it.
void dequantizeAtEachReader(DequantizeOp dequantize) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : dequantize.getResult().getUses())
    uses.push_back(&use);
  if (uses.size() < 2)
    return;
  llvm::sort(uses, [](OpOperand *a, OpOperand *b) {
    return a->getOwner()->isBeforeInBlock(b->getOwner());
  });
  Operation *previousReader = uses.front()->getOwner();
  Value previous = dequantize.getResult();
  for (OpOperand *use : llvm::drop_begin(uses)) {
    // Two operands of one reader share its dequantization.
    if (use->getOwner() == previousReader) {
      use->set(previous);
      continue;
    }
    OpBuilder builder(use->getOwner());
    previous = builder.clone(*dequantize)->getResult(0);
    previousReader = use->getOwner();
    use->set(previous);
  }
}

struct DequantizeAtUsePass : bertc::impl::DequantizeAtUseBase<DequantizeAtUsePass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      for (DequantizeOp dequantize : llvm::to_vector(func.getBody().getOps<DequantizeOp>()))
        dequantizeAtEachReader(dequantize);
    });
  }
};

} // namespace
