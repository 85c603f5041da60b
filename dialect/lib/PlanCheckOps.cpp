//===- PlanCheckOps.cpp - finding and removing the plan checks ------------===//
//
// The plan-check ops (BertPlanCheckOps.td) that -bertc-instrument-plan-checks inserts:
// whether a module holds any, and taking them out again.
//
//===----------------------------------------------------------------------===//

#include "bert/BertDialect.h"

using namespace mlir;
using namespace mlir::bert;

namespace {
bool isPlanCheck(Operation *op) {
  return isa<PlanCheckReadOp, PlanCheckDefineOp, PlanCheckReleaseOp>(op);
}
} // namespace

bool mlir::bert::hasPlanChecks(Operation *root) {
  return root
      ->walk([](Operation *op) {
        return isPlanCheck(op) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

void mlir::bert::erasePlanChecks(Operation *root) {
  SmallVector<Operation *> checks;
  root->walk([&](Operation *op) {
    if (isPlanCheck(op))
      checks.push_back(op);
  });
  for (Operation *check : checks)
    check->erase();
}
