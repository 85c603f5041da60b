//===- lm_head_cost_test.cpp - the LM head loss's kernels by hand ----------===//
//
// bert.lm_head_loss and its gradients at Llama 3 sizes (vocab 128256, width 2048, bf16) over
// 32 x 128 = 4096 tokens in chunks of 512 (8 chunks): the forward's logits GEMM (2 T V H
// flops), its rows and the loss's sum; the backward's three GEMMs (the recomputed logits, d
// hidden, d weight) and its rows. Bytes are the operands each chunk reads again (the
// weight; the fp32 weight gradient, read and written) and the workspace's block passes.
// Every count is an integer below 2^53, so the comparisons are exact.
//
//===----------------------------------------------------------------------===//

#include "cost_test_ops.h"

namespace {

using bertc::estimateOpKernels;
using bertc::test::kBatch;
using bertc::test::Ops;
using mlir::bert::ComputeUnit;
using mlir::bert::CostTarget;

constexpr int64_t kSeq = 128;
// T V = 4096 x 128256 = 525,336,576 logits; a GEMM 2 T V H = 2,151,778,615,296 flops.
constexpr double kLogits = 525336576.0, kGemmFlops = 2151778615296.0;
// The logits GEMM: hidden 4096 x 2048 x 2 = 16,777,216 B, the weight 128256 x 2048 x 2 =
// 525,336,576 B read by each of 8 chunks, the fp32 block written: 4 T V = 2,101,346,304.
constexpr double kLogitsGemmBytes = 16777216.0 + 8 * 525336576.0 + 2101346304.0;

const char *kArguments = "%h: tensor<?x?x2048xbf16>, %w: tensor<128256x2048xbf16>, "
                         "%labels: tensor<?x?xi32>, %dloss: tensor<f32>";

void expectKernel(const mlir::bert::KernelWork &kernel, ComputeUnit unit, double flops,
                  double bytes, int launches, const char *what) {
  EXPECT_EQ(kernel.unit, unit) << what;
  EXPECT_EQ(kernel.flops, flops) << what;
  EXPECT_EQ(kernel.bytes, bytes) << what;
  EXPECT_EQ(kernel.launches, launches) << what;
}

TEST(LmHeadCost, ForwardIsOneGemmOfTheLogitsAndTheirRows) {
  Ops ops(kArguments, R"mlir(
  %loss = bert.lm_head_loss %h, %w, %labels {token_chunk = 512 : i64}
      : (tensor<?x?x2048xbf16>, tensor<128256x2048xbf16>, tensor<?x?xi32>) -> tensor<f32>
)mlir");
  auto kernels = estimateOpKernels(ops.op("bert.lm_head_loss"), kBatch, kSeq, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 3u);
  expectKernel(kernels[0], ComputeUnit::HalfGemm, kGemmFlops, kLogitsGemmBytes, 8, "logits");
  // Rows: 12 flops a logit (a max compare, an expf, an add); the block read (4 T V) and
  // each token's label read and loss written (2 x 4 x 4096 = 32,768).
  expectKernel(kernels[1], ComputeUnit::Fp32Cores, 12 * kLogits, 4 * kLogits + 32768.0, 8, "rows");
  // The sum: the 4096 losses read, the loss written.
  expectKernel(kernels[2], ComputeUnit::Fp32Cores, 4096.0, 16388.0, 1, "sum");
}

TEST(LmHeadCost, BackwardIsThreeGemmsAndTheRows) {
  Ops ops(kArguments, R"mlir(
  %dh, %dw = bert.lm_head_loss_grad %dloss, %h, %w, %labels {token_chunk = 512 : i64}
      : (tensor<f32>, tensor<?x?x2048xbf16>, tensor<128256x2048xbf16>, tensor<?x?xi32>)
        -> (tensor<?x?x2048xbf16>, tensor<128256x2048xf32>)
  %dh2 = bert.lm_head_loss_grad %dloss, %h, %w, %labels {token_chunk = 512 : i64}
      : (tensor<f32>, tensor<?x?x2048xbf16>, tensor<128256x2048xbf16>, tensor<?x?xi32>)
        -> tensor<?x?x2048xbf16>
)mlir");
  mlir::Operation *withWeight = ops.op("bert.lm_head_loss_grad");
  auto kernels = estimateOpKernels(withWeight, kBatch, kSeq, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 4u);
  expectKernel(kernels[0], ComputeUnit::HalfGemm, kGemmFlops, kLogitsGemmBytes, 8, "logits");
  // Rows: the lse again and each logit's gradient, 24 flops a logit; the block read and
  // rewritten in bf16 (6 T V) and the labels read (16,384).
  expectKernel(kernels[1], ComputeUnit::Fp32Cores, 24 * kLogits, 6 * kLogits + 16384.0, 8, "rows");
  // d hidden: the bf16 gradients (2 T V), the weight per chunk, d hidden written.
  expectKernel(kernels[2], ComputeUnit::HalfGemm, kGemmFlops,
               2 * kLogits + 8 * 525336576.0 + 16777216.0, 8, "d hidden");
  // d weight: the gradients, hidden, and per chunk the fp32 gradient read and written:
  // 8 x 2 x 4 x 128256 x 2048 = 16,810,770,432.
  expectKernel(kernels[3], ComputeUnit::HalfGemm, kGemmFlops,
               2 * kLogits + 16777216.0 + 16810770432.0, 8, "d weight");

  // A frozen weight: no d weight GEMM.
  mlir::Operation *hiddenOnly = withWeight->getNextNode();
  EXPECT_EQ(estimateOpKernels(hiddenOnly, kBatch, kSeq, CostTarget::Cuda).size(), 3u);
}

} // namespace
