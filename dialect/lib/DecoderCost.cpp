//===- DecoderCost.cpp - the kernels of the decoder ops --------------------===//
//
// CostOpInterface for RMSNorm, SiLU, rotary embeddings and the LM head loss (bert.mul is the
// default: one flop per element, every byte once). The rules follow the kernels of
// runtime/cpu and runtime/cuda (rms_norm, rope, elementwise, lm_head_loss): where the
// targets' kernels differ, the rule says so.
//
//===----------------------------------------------------------------------===//

#include "CostRules.h"

#include <cmath>

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

/// A logit's part of a row's log-sum-exp: its max compare, an expf (about 10) and its add.
constexpr double kLseFlops = 12;
/// A logit's gradient from the lse: an expf again, the difference from the one-hot label
/// and the scale.
constexpr double kLogitGradFlops = 12;

/// The LM head loss at (batch, seq): its tokens, vocabulary and width, the chunks of
/// token_chunk tokens its kernels take (one where none is chosen yet), the bytes of a
/// stored element, and its operands' bytes.
struct LmHeadSize {
  double tokens, vocab, width, chunks, stored, hiddenBytes, weightBytes;

  LmHeadSize(Value hidden, Value weight, int64_t tokenChunk, int64_t batch, int64_t seq)
      : tokens(rowsAt(hidden, batch, seq)),
        vocab(double(cast<RankedTensorType>(weight.getType()).getShape()[0])),
        width(features(hidden)),
        chunks(tokenChunk > 0 ? std::ceil(tokens / double(tokenChunk)) : 1.0),
        stored(storageBytes(hidden)), hiddenBytes(bytesOf(hidden, batch, seq)),
        weightBytes(bytesOf(weight, batch, seq)) {}

  /// Logits (or their gradients) of every chunk together.
  double logits() const { return tokens * vocab; }
  /// One of the chunks' [chunk, vocab] x [vocab, width] products, over all chunks: each
  /// chunk reads the whole weight again.
  KernelWork gemm(Value storage, double bytes) const {
    return {gemmUnit(storage, false), gemmFlops(tokens, vocab, width), bytes, int(chunks)};
  }
  /// The recomputed logits: hidden and the weight read, the fp32 block written.
  KernelWork logitsGemm(Value storage) const {
    return gemm(storage, hiddenBytes + chunks * weightBytes + 4 * logits());
  }
};

/// The forward and backward of the LM head loss (the backward with its weight gradient
/// where `weightGrad`, accumulated into a slot or not).
SmallVector<KernelWork, 1> lmHeadKernels(const LmHeadSize &size, Value hidden, bool backward,
                                         bool weightGrad) {
  double labels = 4 * size.tokens;
  if (!backward)
    // Per chunk the rows read the block and write each token's loss; one launch sums them.
    return {size.logitsGemm(hidden),
            {ComputeUnit::Fp32Cores, kLseFlops * size.logits(), 4 * size.logits() + 2 * labels,
             int(size.chunks)},
            {ComputeUnit::Fp32Cores, size.tokens, 4 * size.tokens + 4}};
  // The rows read the block and rewrite it as the stored gradient; d hidden reads it and
  // the weight; d weight reads it and hidden and adds into its fp32 gradient per chunk.
  SmallVector<KernelWork, 1> kernels = {
      size.logitsGemm(hidden),
      {ComputeUnit::Fp32Cores, (kLseFlops + kLogitGradFlops) * size.logits(),
       (4 + size.stored) * size.logits() + labels, int(size.chunks)},
      size.gemm(hidden,
                size.stored * size.logits() + size.chunks * size.weightBytes + size.hiddenBytes)};
  if (weightGrad)
    kernels.push_back(size.gemm(hidden, size.stored * size.logits() + size.hiddenBytes +
                                            size.chunks * 2 * 4 * size.vocab * size.width));
  return kernels;
}

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

// FLOPs: 2 T V H for the logits; the backward three such GEMMs (the recomputed logits, d
// hidden, d weight) and the softmax's rows; bytes: the workspace's block passes.
SmallVector<KernelWork, 1> LmHeadLossOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  LmHeadSize size(getHidden(), getWeight(), getTokenChunk(), batch, seq);
  return lmHeadKernels(size, getHidden(), /*backward=*/false, /*weightGrad=*/false);
}

SmallVector<KernelWork, 1> LmHeadLossGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                             CostTarget) {
  LmHeadSize size(getHidden(), getWeight(), getTokenChunk(), batch, seq);
  return lmHeadKernels(size, getHidden(), /*backward=*/true, bool(getWeightGrad()));
}

// The same kernels, d weight's GEMM adding into the slot as it adds into its own result.
SmallVector<KernelWork, 1> AccumulateLmHeadLossGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                                       CostTarget) {
  LmHeadSize size(getHidden(), getParam(), getTokenChunk(), batch, seq);
  return lmHeadKernels(size, getHidden(), /*backward=*/true, /*weightGrad=*/true);
}
