//===- AttentionCost.cpp - the kernels of attention and its gradient ------===//
//
// Attention's cost rules follow each target's kernels, which differ. The forward's rule is
// the target's; which backward an attention_grad runs is in the IR (`recompute_forward`,
// set by -bertc-lower-to-target for the cuda target's kernels), and its rule follows that:
//
// CPU (runtime/cpu/attention.cpp; an attention_grad without `recompute_forward`): per
// (sequence, head), the products are OpenBLAS GEMMs through mixedGemm (16-bit storage
// converted to fp32 tiles) and softmax, dropout and the score gradients are loops on one
// core over a [seq, seq] scratch that stays in cache.
//   forward   QK^T, PV                                          2 products
//   backward  QK^T again (the probabilities are not kept), dctx V^T, then dV = P^T dctx,
//             dQ = dS K, dK = dS^T Q                            5 products
//
// CUDA (runtime/cuda/attention_*.cu; an attention_grad with `recompute_forward`): fused
// kernels whose products are fp32 multiply-adds on CUDA cores (no tensor cores, whatever
// the storage type), over the head dimension rounded up to 32, 64 or 128 (the kernels'
// register slices; the padding multiplies zeros). attention_grad keeps neither the
// probabilities' row statistics nor the output, so its launches are the forward again,
// then the backward's three kernels:
//   forward           QK^T, PV                                  2 products
//   row term          r = dctx . ctx per row                    (a dot per row)
//   key/value grads   QK^T again, dV += P dctx, dP = dctx V^T, dK += dS Q    4 products
//   query grads       QK^T again, dP = dctx V^T, dQ += dS K     3 products
// so the backward runs 9 products where the mathematics needs 4 (dV, dP, dQ, dK).
//
// A product is a multiply-add per (sequence, head, query, key, head dim): 2 * scores * d
// flops with scores = batch * heads * seq * seq. Per score, every target also turns a
// score into a probability (kProbabilityFlops), the backward turns a probability's
// gradient into its score's (kScoreGradFlops), and with dropout each kernel that needs
// the mask draws it again (kDropoutDrawFlops).
//
//===----------------------------------------------------------------------===//

#include "CostRules.h"

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::cost;

namespace {

/// Scale and mask (a multiply-add), the row maximum, exp (about four) and the row sum.
constexpr double kProbabilityFlops = 8;
/// The dropout factor, (dP - r) times P and the 1 / sqrt(d) scale.
constexpr double kScoreGradFlops = 4;

/// What attention's work scales with at (batch, seq).
struct AttentionSize {
  double batch, seq, heads, headDim, dropout;

  AttentionSize(Value query, int64_t heads, float dropout, int64_t batch, int64_t seq)
      : batch(double(batch)), seq(double(seq)), heads(double(heads)),
        headDim(features(query) / double(heads)), dropout(dropout) {}

  double scores() const { return batch * heads * seq * seq; }
  /// `count` products over `dims` dimensions per head.
  double productFlops(double count, double dims) const { return count * 2 * scores() * dims; }
  /// The elementwise work per score of a kernel that computes probabilities (and their
  /// score gradients with `backward`), drawing the dropout mask where there is one.
  double perScoreFlops(bool backward) const {
    double perScore = kProbabilityFlops + (backward ? kScoreGradFlops : 0) +
                      (dropout > 0 ? kDropoutDrawFlops : 0);
    return perScore * scores();
  }
  /// The head dimension the CUDA kernels compute over (attention_common.cuh).
  double cudaHeadDim() const { return headDim <= 32 ? 32 : headDim <= 64 ? 64 : 128; }
  /// Bytes of the CUDA kernels' per-row statistics: `floats` fp32 values per query row.
  double statisticsBytes(double floats) const { return batch * heads * seq * 4 * floats; }
};

/// The CPU's kernels: one entry for the GEMMs (`products` of them) and one for the loops.
SmallVector<KernelWork, 1> cpuAttention(const AttentionSize &size, Value storage, double products,
                                        bool backward, double bytes) {
  return {{gemmUnit(storage, /*tf32=*/false), size.productFlops(products, size.headDim), bytes},
          {ComputeUnit::Fp32Cores, size.perScoreFlops(backward), 0}};
}

/// The CUDA forward kernel: products and the online softmax; reads q, k, v and the mask,
/// writes the output and two statistics per row.
KernelWork cudaForward(const AttentionSize &size, double bytesIn, double bytesOut) {
  return {ComputeUnit::Fp32Cores,
          size.productFlops(2, size.cudaHeadDim()) + size.perScoreFlops(false),
          bytesIn + bytesOut + size.statisticsBytes(2)};
}

} // namespace

SmallVector<KernelWork, 1> AttentionOp::estimateKernels(int64_t batch, int64_t seq,
                                                        CostTarget target) {
  AttentionSize size(getQuery(), getHeads(), getDropout().convertToFloat(), batch, seq);
  double bytesIn = bytesOf(getQuery(), batch, seq) + bytesOf(getKey(), batch, seq) +
                   bytesOf(getValue(), batch, seq) + bytesOf(getMask(), batch, seq);
  double bytesOut = bytesOf(getResult(), batch, seq);
  if (target == CostTarget::Cpu)
    return cpuAttention(size, getQuery(), 2, false, bytesIn + bytesOut);
  return {cudaForward(size, bytesIn, bytesOut)};
}

SmallVector<KernelWork, 1> AttentionGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                            CostTarget target) {
  AttentionSize size(getQuery(), getHeads(), getDropout().convertToFloat(), batch, seq);
  double tensor = bytesOf(getQuery(), batch, seq); // q, k, v, dctx, ctx and each gradient
  double mask = bytesOf(getMask(), batch, seq);
  if (!getRecomputeForward())
    return cpuAttention(size, getQuery(), 5, true, 7 * tensor + mask);
  double headDim = size.cudaHeadDim();
  KernelWork forward = cudaForward(size, 3 * tensor + mask, tensor);
  KernelWork rowTerm{ComputeUnit::Fp32Cores, 2 * size.batch * size.seq * features(getQuery()),
                     2 * tensor + size.statisticsBytes(1)};
  // Each reads dctx, q, k, v, the mask and three statistics per row.
  double backwardReads = 4 * tensor + mask + size.statisticsBytes(3);
  KernelWork keyValueGrads{ComputeUnit::Fp32Cores,
                           size.productFlops(4, headDim) + size.perScoreFlops(true),
                           backwardReads + 2 * tensor};
  KernelWork queryGrads{ComputeUnit::Fp32Cores,
                        size.productFlops(3, headDim) + size.perScoreFlops(true),
                        backwardReads + tensor};
  return {forward, rowTerm, keyValueGrads, queryGrads};
}
