//===- OffloadOps.cpp - activations kept in host memory -------------------===//

#include "CostRules.h"

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::cost;

LogicalResult OffloadOp::verify() {
  for (Operation *user : getResult().getUsers())
    if (!isa<ReloadOp>(user))
      return emitOpError() << "result lives in host memory: only bert.reload may read it, not '"
                           << user->getName() << "'";
  return success();
}

LogicalResult ReloadOp::verify() {
  if (!getInput().getDefiningOp<OffloadOp>())
    return emitOpError() << "input must be the host copy a bert.offload makes";
  return success();
}

SmallVector<KernelWork, 1> OffloadOp::estimateKernels(int64_t batch, int64_t seq,
                                                      CostTarget target) {
  return {hostCopyKernel(bytesOf(getInput(), batch, seq), target)};
}

SmallVector<KernelWork, 1> ReloadOp::estimateKernels(int64_t batch, int64_t seq,
                                                     CostTarget target) {
  return {hostCopyKernel(bytesOf(getResult(), batch, seq), target)};
}
