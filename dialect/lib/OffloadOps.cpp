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

namespace {

/// A copy of `tensor` between the device and host memory: over the host link on a GPU; on
/// the CPU, where both lie in host memory, a memcpy that reads and writes its bytes.
KernelWork hostCopyKernel(Value tensor, int64_t batch, int64_t seq, CostTarget target) {
  double bytes = bytesOf(tensor, batch, seq);
  if (target == CostTarget::Cpu)
    return {ComputeUnit::Fp32Cores, 0, 2 * bytes};
  KernelWork copy{ComputeUnit::Fp32Cores, 0, 0};
  copy.hostLinkBytes = bytes;
  return copy;
}

} // namespace

SmallVector<KernelWork, 1> OffloadOp::estimateKernels(int64_t batch, int64_t seq,
                                                      CostTarget target) {
  return {hostCopyKernel(getInput(), batch, seq, target)};
}

SmallVector<KernelWork, 1> ReloadOp::estimateKernels(int64_t batch, int64_t seq,
                                                     CostTarget target) {
  return {hostCopyKernel(getResult(), batch, seq, target)};
}
