//===- AttentionCost.cpp - the kernels of attention and its gradient ------===//
//
// Attention's cost rules follow each target's kernels, which differ. Both keep the
// forward's log-sum-exp per query row (`lse`) and its output, so neither backward runs
// the forward again: the probabilities come back as p = exp(s - lse) from recomputed
// scores, and the row term r = dctx . ctx from the kept output.
//
// CPU (runtime/cpu/attention.cpp): per (sequence, head), the products are OpenBLAS GEMMs
// through mixedGemm (16-bit storage converted to fp32 tiles) and softmax, dropout and the
// score gradients are loops on one core over a [seq, seq] scratch that stays in cache.
//   forward   QK^T, PV                                          2 products
//   backward  QK^T again (the probabilities are not kept), dctx V^T, then dV = P^T dctx,
//             dQ = dS K, dK = dS^T Q                            5 products
//
// CUDA (runtime/cuda/attention_*.cu): fused kernels whose products are fp32 multiply-adds
// on CUDA cores (no tensor cores, whatever the storage type), over the head dimension
// rounded up to 32, 64 or 128 (the kernels' register slices; the padding multiplies
// zeros). The backward's launches:
//   row term          r = dctx . ctx per row                    (a dot per row)
//   key/value grads   QK^T again, dV += P dctx, dP = dctx V^T, dK += dS Q    4 products
//   query grads       QK^T again, dP = dctx V^T, dQ += dS K     3 products
// so the backward runs 7 products where the mathematics needs 4 (dV, dP, dQ, dK). With
// dropout the key/value kernel draws the mask and writes it as bits (attentionKeepWords),
// which the query kernel reads instead of drawing.
// With 16-bit storage and a head dimension of at most 128 (runtime/cuda/attention_mma_*.cu)
// the same kernels' products are warp matrix products on tensor cores, over the head
// dimension rounded up to 32, 64, 96 or 128, priced at the own kernels' tensor-core rate,
// and their other arithmetic at the CUDA cores' rate, one after the other. The forward's one
// pass rescales its running output as the row maxima grow, so 2 products, as on CUDA cores.
//
// CUDA with head_chunk n > 0 (runtime/cuda/attention_chunked_*.cu): per chunk of n heads,
// each product is one cuBLASLt GEMM batched over the chunk's heads and the sequences, or
// two products of one layout together (one kernel first fills the pointer arrays of all the
// chunk's GEMMs), at the storage type's GEMM rate (tensor cores for 16-bit storage, and for fp32
// under `tf32`), over the true head dimension; one row kernel per chunk, bound by the bytes
// it moves through the [seq, seq] score blocks (fp32 scores read, the storage type's
// probabilities written in place):
//   forward   QK^T, softmax + lse + dropout rows, PV              2 products in 2 GEMMs
//   backward  QK^T with dctx V^T, row term + P / dS rows,
//             dV with dK, dQ                                      5 products in 3 GEMMs
//
// A product is a multiply-add per (sequence, head, query, key, head dim): 2 * scores * d
// flops with scores = batch * heads * seq * seq. Per score, the forward turns a score
// into a probability (kProbabilityFlops), the backward recomputes it from the lse
// (kProbabilityFromLseFlops) and turns its gradient into its score's (kScoreGradFlops),
// and with dropout each kernel that needs the mask draws it again (kDropoutDrawFlops),
// except the fused backward's query kernel.
//
// Causal: the CPU kernels and the CUDA fused ones compute only the (query, key) pairs a
// query reaches, priced as scores = batch * heads * seq (seq + 1) / 2 (the blocks on the
// diagonal, computed whole, are left out); the CUDA chunked GEMMs compute every score.
// Grouped-query heads change no flops, but k, v, dk and dv are kv_heads * d wide, and the
// CUDA chunked backward writes dk and dv per query head in fp32 and sums each group's in
// a kernel of its own.
//
//===----------------------------------------------------------------------===//

#include "CostRules.h"

#include "bertc/abi/kernel_workspace.h"

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::cost;

namespace {

/// Scale and mask (a multiply-add), the row maximum, exp (about four) and the row sum.
constexpr double kProbabilityFlops = 8;
/// Scale and mask (a multiply-add), the lse subtracted and exp (about four).
constexpr double kProbabilityFromLseFlops = 7;
/// The dropout factor, (dP - r) times P and the 1 / sqrt(d) scale.
constexpr double kScoreGradFlops = 4;

/// What attention's work scales with at (batch, seq). `reachedOnly`: the kernels compute
/// only the pairs a causal query reaches.
struct AttentionSize {
  double batch, seq, heads, headDim, dropout;
  bool causalPairs;

  template <typename AttentionLikeOp>
  AttentionSize(AttentionLikeOp op, int64_t batch, int64_t seq, bool reachedOnly)
      : batch(double(batch)), seq(double(seq)), heads(double(op.getHeads())),
        headDim(features(op.getQuery()) / double(op.getHeads())),
        dropout(op.getDropout().convertToFloat()), causalPairs(reachedOnly && op.getCausal()) {}

  /// The (query, key) pairs the kernels compute per head: seq * seq, or seq (seq + 1) / 2.
  double scores() const {
    return causalPairs ? batch * heads * (seq * (seq + 1) / 2) : batch * heads * seq * seq;
  }
  /// `count` products over `dims` dimensions per head.
  double productFlops(double count, double dims) const { return count * 2 * scores() * dims; }
  /// `perScore` flops of elementwise work per score, and the dropout mask's draw where there
  /// is one.
  double withDropout(double perScore) const {
    return (perScore + (dropout > 0 ? kDropoutDrawFlops : 0)) * scores();
  }
  /// The elementwise work per score of a forward kernel (`backward` false: probabilities)
  /// or a backward one (probabilities from the lse and their score gradients), drawing the
  /// dropout mask where there is one unless the kernel reads it (`drawsMask` false).
  double perScoreFlops(bool backward, bool drawsMask = true) const {
    double perScore = backward ? kProbabilityFromLseFlops + kScoreGradFlops : kProbabilityFlops;
    return drawsMask ? withDropout(perScore) : perScore * scores();
  }
  /// The head dimension the CUDA kernels compute over on CUDA cores (attention_common.cuh)
  /// and on tensor cores (attention_mma.cuh).
  double cudaHeadDim() const { return headDim <= 32 ? 32 : headDim <= 64 ? 64 : 128; }
  double tensorCoreHeadDim() const {
    return headDim <= 64 ? cudaHeadDim() : headDim <= 96 ? 96 : 128;
  }
  /// Bytes of `floats` fp32 values per query row of each head (the lse, the row term).
  double statisticsBytes(double floats) const { return batch * heads * seq * 4 * floats; }
  /// Bytes of the fused backward's dropout mask (none without dropout).
  double keepMaskBytes() const {
    double words =
        double(bertc::cuda::attentionKeepWords(int64_t(batch), int64_t(heads), int64_t(seq)));
    return dropout > 0 ? words * sizeof(uint32_t) : 0;
  }
};

/// Chunks of `headChunk` heads.
int chunks(const AttentionSize &size, int64_t headChunk) {
  int64_t heads = int64_t(size.heads);
  return int((heads + headChunk - 1) / headChunk);
}

/// `count` products in `calls` GEMMs per chunk, each batched over the chunk's heads and the
/// sequences, that move `tensorBytes` of [batch, seq, hidden] operands and results and
/// `scoreBytes` of score blocks; fp32 ones at the TF32 rate when the op has `tf32`. With
/// `fill`, the kernel that fills the pointer arrays of all the chunk's GEMMs runs first.
KernelWork headGemms(const AttentionSize &size, int64_t headChunk, Value storage, bool tf32,
                     double count, int calls, bool fill, double tensorBytes, double scoreBytes) {
  return {gemmUnit(storage, tf32), size.productFlops(count, size.headDim), tensorBytes + scoreBytes,
          (calls + (fill ? 1 : 0)) * chunks(size, headChunk)};
}

/// The row kernels over the score blocks, one launch per chunk of `headChunk` heads.
KernelWork scoreRows(const AttentionSize &size, int64_t headChunk, bool backward, double bytes) {
  return {ComputeUnit::Fp32Cores, size.perScoreFlops(backward), bytes, chunks(size, headChunk)};
}

/// Whether the CUDA target's fused kernels (head_chunk 0) run their products on tensor
/// cores: 16-bit storage and a head dimension of at most kMaxTensorCoreAttentionHeadDim.
bool fusedOnTensorCores(const AttentionSize &size, Value storage) {
  return isHalf(storage) && size.headDim <= double(bertc::cuda::kMaxTensorCoreAttentionHeadDim);
}

/// A fused kernel of `products` products and `perScoreFlops` other work that moves `bytes`:
/// on tensor cores, the products and then the rest (the second entry, in the same launch);
/// else all of it on CUDA cores, over the head dimension rounded up to the kernels' size.
SmallVector<KernelWork, 1> fusedKernel(const AttentionSize &size, bool tensorCores, double products,
                                       double perScoreFlops, double bytes) {
  if (!tensorCores)
    return {{ComputeUnit::Fp32Cores,
             size.productFlops(products, size.cudaHeadDim()) + perScoreFlops, bytes}};
  return {
      {ComputeUnit::HalfOwnMatrix, size.productFlops(products, size.tensorCoreHeadDim()), bytes},
      {ComputeUnit::Fp32Cores, perScoreFlops, 0, /*launches=*/0}};
}

/// The CPU's kernels: one entry for the GEMMs (`products` of them) and one for the loops.
SmallVector<KernelWork, 1> cpuAttention(const AttentionSize &size, Value storage, double products,
                                        bool backward, double bytes) {
  return {{gemmUnit(storage, /*tf32=*/false), size.productFlops(products, size.headDim), bytes},
          {ComputeUnit::Fp32Cores, size.perScoreFlops(backward), 0}};
}

} // namespace

SmallVector<KernelWork, 1> AttentionOp::estimateKernels(int64_t batch, int64_t seq,
                                                        CostTarget target) {
  int64_t headChunk = getHeadChunk();
  AttentionSize size(*this, batch, seq, target == CostTarget::Cpu || headChunk == 0);
  // Reads q, k, v and the mask, writes the output and the lse.
  double bytes = bytesOf(getQuery(), batch, seq) + bytesOf(getKey(), batch, seq) +
                 bytesOf(getValue(), batch, seq) + bytesOf(getMask(), batch, seq) +
                 bytesOf(getResult(), batch, seq) + size.statisticsBytes(1);
  if (target == CostTarget::Cpu)
    return cpuAttention(size, getQuery(), 2, false, bytes);
  if (headChunk) {
    double scores = size.scores(), stored = storageBytes(getQuery());
    // QK^T reads q and k and writes fp32 scores; the rows read them and the mask, write P*Z
    // and the lse; PV reads P*Z and v and writes the output.
    double tensor = bytesOf(getQuery(), batch, seq), kvTensor = bytesOf(getKey(), batch, seq);
    return {
        headGemms(size, headChunk, getQuery(), getTf32(), 1, 1, true, tensor + kvTensor,
                  4 * scores),
        scoreRows(size, headChunk, false,
                  (4 + stored) * scores + bytesOf(getMask(), batch, seq) + size.statisticsBytes(1)),
        headGemms(size, headChunk, getQuery(), getTf32(), 1, 1, false, kvTensor + tensor,
                  stored * scores)};
  }
  return fusedKernel(size, fusedOnTensorCores(size, getQuery()), 2, size.perScoreFlops(false),
                     bytes);
}

SmallVector<KernelWork, 1> AttentionGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                            CostTarget target) {
  int64_t headChunk = getHeadChunk();
  AttentionSize size(*this, batch, seq, target == CostTarget::Cpu || headChunk == 0);
  // q, dctx, ctx and dq are query-shaped; k, v, dk and dv key-shaped.
  double tensor = bytesOf(getQuery(), batch, seq), kvTensor = bytesOf(getKey(), batch, seq);
  double mask = bytesOf(getMask(), batch, seq);
  if (target == CostTarget::Cpu)
    return cpuAttention(size, getQuery(), 5, true,
                        4 * tensor + 4 * kvTensor + mask + size.statisticsBytes(1));
  // The row term's dot products: dctx and ctx read.
  double rowTermFlops = 2 * size.batch * size.seq * features(getQuery());
  if (headChunk) {
    double scores = size.scores(), stored = storageBytes(getQuery());
    // QK^T and dctx V^T write fp32 blocks; the rows read both, the mask, the lse, and dctx
    // and ctx for their row terms, and write P*Z and dS; dV, dQ and dK read one of them each
    // and dctx, k and q, and write dv, dq and dk.
    KernelWork rows =
        scoreRows(size, headChunk, true,
                  (8 + 2 * stored) * scores + mask + size.statisticsBytes(1) + 2 * tensor);
    rows.flops += rowTermFlops;
    SmallVector<KernelWork, 1> kernels{headGemms(size, headChunk, getQuery(), getTf32(), 2, 1, true,
                                                 2 * tensor + 2 * kvTensor, 8 * scores),
                                       rows};
    if (getGroupedHeadDim() == 0) {
      kernels.push_back(headGemms(size, headChunk, getQuery(), getTf32(), 3, 2, false,
                                  3 * tensor + 3 * kvTensor, 3 * stored * scores));
      return kernels;
    }
    // Grouped-query heads: dv and dk per query head in fp32, which a kernel per chunk adds
    // up over each group into dv and dk.
    double perHeadGrads = 2 * size.batch * size.seq * features(getQuery()) * 4;
    kernels.push_back(headGemms(size, headChunk, getQuery(), getTf32(), 3, 2, false,
                                3 * tensor + kvTensor + perHeadGrads, 3 * stored * scores));
    kernels.push_back({ComputeUnit::Fp32Cores, perHeadGrads / 4, perHeadGrads + 2 * kvTensor,
                       chunks(size, headChunk)});
    return kernels;
  }
  KernelWork rowTerm{ComputeUnit::Fp32Cores, rowTermFlops, 2 * tensor + size.statisticsBytes(1)};
  bool tensorCores = fusedOnTensorCores(size, getQuery());
  // Each reads dctx, q, k, v, the mask, the lse and the row term.
  double backwardReads = 2 * tensor + 2 * kvTensor + mask + size.statisticsBytes(2);
  SmallVector<KernelWork, 1> kernels{rowTerm};
  // The key/value kernel draws the dropout mask and writes it with dk and dv; the query
  // kernel reads it and writes dq.
  kernels.append(fusedKernel(size, tensorCores, 4, size.perScoreFlops(true),
                             backwardReads + 2 * kvTensor + size.keepMaskBytes()));
  kernels.append(fusedKernel(size, tensorCores, 3,
                             size.perScoreFlops(/*backward=*/true, /*drawsMask=*/false),
                             backwardReads + tensor + size.keepMaskBytes()));
  return kernels;
}
