//===- DecoderCost.cpp - the kernels of the decoder ops --------------------===//
//
// CostOpInterface for RMSNorm, SiLU and rotary embeddings (bert.mul is the default: one
// flop per element, every byte once). The rules follow the kernels of runtime/cpu and
// runtime/cuda (rms_norm, rope, elementwise): where the targets' kernels differ, the rule says so.
//
//===----------------------------------------------------------------------===//

#include "CostRules.h"

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::cost;

namespace {
/// A row's sum of squares: a multiply-add per element.
constexpr double kRmsStatisticsFlops = 2;
/// x * r, rounded, times the weight.
constexpr double kRmsApplyFlops = 2;
/// The backward's dx: g = w dy, the row sum of g x-hat and r (g - x-hat mean): about 6.
constexpr double kRmsInputGradFlops = 6;
/// d weight: x-hat again, times dy, added: 3.
constexpr double kRmsWeightGradFlops = 3;
/// An expf (a range reduction and a polynomial, about 10) and the rest of sigmoid and the
/// product: SiLU's forward about 13, its derivative s (1 + x (1 - s)) dy about 17.
constexpr double kSiluFlops = 13;
constexpr double kSiluGradFlops = 17;
/// One sincosf (range reduction and two polynomials, about 40) and the angle's product,
/// once per token and rotated pair, shared by the heads.
constexpr double kRopeAngleFlops = 41;
/// Two products and a sum per element.
constexpr double kRopeRotateFlops = 3;

/// The rotation of `x` (rope or its gradient): a sincos per token and pair of a head, then
/// every element rotated; every operand and result byte moved once.
KernelWork ropeKernel(Operation *op, Value x, ArrayRef<float> invFreq, int64_t batch, int64_t seq) {
  double angles = rowsAt(x, batch, seq) * double(invFreq.size());
  return {ComputeUnit::Fp32Cores,
          kRopeAngleFlops * angles + kRopeRotateFlops * elementsAt(x, batch, seq),
          operandAndResultBytes(op, batch, seq)};
}
} // namespace

SmallVector<KernelWork, 1> RmsNormOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {{ComputeUnit::Fp32Cores,
           (kRmsStatisticsFlops + kRmsApplyFlops) * elementsAt(getResult(), batch, seq),
           operandAndResultBytes(*this, batch, seq)}};
}

// The CPU's one pass recomputes each row's statistics and sums d weight over blocks of
// rows still in cache. On CUDA a row kernel writes dx and each row's r (4 bytes a row, the
// op's workspace) and a column kernel reads dy, x and r again for d weight.
SmallVector<KernelWork, 1> RmsNormGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                          CostTarget target) {
  double elements = elementsAt(getInput(), batch, seq);
  double weightGradBytes =
      4 * double(cast<RankedTensorType>(getWeight().getType()).getNumElements());
  double dy = bytesOf(getResultGrad(), batch, seq), x = bytesOf(getInput(), batch, seq);
  double rowBytes = dy + x + bytesOf(getWeight(), batch, seq) + bytesOf(getInputGrad(), batch, seq);
  if (target == CostTarget::Cpu)
    return {{ComputeUnit::Fp32Cores,
             (kRmsStatisticsFlops + kRmsInputGradFlops + kRmsWeightGradFlops) * elements,
             rowBytes + weightGradBytes}};
  double rstd = 4 * rowsAt(getInput(), batch, seq);
  return {
      {ComputeUnit::Fp32Cores, (kRmsStatisticsFlops + kRmsInputGradFlops) * elements,
       rowBytes + rstd},
      {ComputeUnit::Fp32Cores, kRmsWeightGradFlops * elements, dy + x + rstd + weightGradBytes}};
}

SmallVector<KernelWork, 1> SiluOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {{ComputeUnit::Fp32Cores, kSiluFlops * elementsAt(getResult(), batch, seq),
           operandAndResultBytes(*this, batch, seq)}};
}

SmallVector<KernelWork, 1> SiluGradOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {{ComputeUnit::Fp32Cores, kSiluGradFlops * elementsAt(getInputGrad(), batch, seq),
           operandAndResultBytes(*this, batch, seq)}};
}

SmallVector<KernelWork, 1> RopeOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {ropeKernel(*this, getInput(), getInvFreq(), batch, seq)};
}

SmallVector<KernelWork, 1> RopeGradOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {ropeKernel(*this, getResultGrad(), getInvFreq(), batch, seq)};
}
