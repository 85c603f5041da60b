//===- step_cost_test.cpp - op kernels and the roofline against hand counts ===//
//
// Each case parses a few bert ops at BERT-base dimensions (hidden H = 768, 12 heads of
// d = 64, intermediate I = 3072) and compares what their CostOpInterface says the kernels
// compute and move, and what the roofline makes of it, with counts worked out by hand in
// the comments. The comparisons are exact (every count is an integer below 2^53) or, for
// seconds, to a relative 1e-12.
//
//===----------------------------------------------------------------------===//

#include "cost_test_ops.h"

namespace {

using bertc::DeviceModel;
using bertc::estimateKernelSeconds;
using bertc::estimateOpFlops;
using bertc::estimateOpKernels;
using bertc::estimateOpSeconds;
using bertc::test::kBatch;
using bertc::test::Ops;
using mlir::bert::ComputeUnit;
using mlir::bert::CostTarget;
using mlir::bert::KernelWork;

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

// One encoder layer's six linear layers: q, k, v and the attention output (H -> H), the
// intermediate (H -> I) and the output (I -> H).
const char *kLayerArguments =
    "%x: tensor<?x?x768xbf16>, %w: tensor<768x768xbf16>, %b: tensor<768xbf16>, "
    "%wi: tensor<3072x768xbf16>, %bi: tensor<3072xbf16>, %wo: tensor<768x3072xbf16>";
const char *kLayerLinears = R"mlir(
  %q = bert.linear %x, %w, %b : (tensor<?x?x768xbf16>, tensor<768x768xbf16>, tensor<768xbf16>) -> tensor<?x?x768xbf16>
  %k = bert.linear %x, %w, %b : (tensor<?x?x768xbf16>, tensor<768x768xbf16>, tensor<768xbf16>) -> tensor<?x?x768xbf16>
  %v = bert.linear %x, %w, %b : (tensor<?x?x768xbf16>, tensor<768x768xbf16>, tensor<768xbf16>) -> tensor<?x?x768xbf16>
  %o = bert.linear %x, %w, %b : (tensor<?x?x768xbf16>, tensor<768x768xbf16>, tensor<768xbf16>) -> tensor<?x?x768xbf16>
  %i = bert.linear %o, %wi, %bi : (tensor<?x?x768xbf16>, tensor<3072x768xbf16>, tensor<3072xbf16>) -> tensor<?x?x3072xbf16>
  %y = bert.linear %i, %wo, %b : (tensor<?x?x3072xbf16>, tensor<768x3072xbf16>, tensor<768xbf16>) -> tensor<?x?x768xbf16>
)mlir";

TEST(StepCost, EncoderLayerForwardGemmFlops) {
  Ops layer(kLayerArguments, kLayerLinears);
  // 2 B S (4 H^2 + 2 H I) for the products plus B S (4 H + I + H) bias adds.
  // seq 128: B S = 4096; 4 H^2 = 2,359,296 and 2 H I = 4,718,592, together 7,077,888;
  //   2 * 4096 * 7,077,888 = 57,982,058,496, and 4096 * (3072 + 3072 + 768) = 28,311,552.
  EXPECT_EQ(layer.flopsOf("bert.linear", 128, CostTarget::Cuda), 57982058496.0 + 28311552.0);
  // seq 512: B S = 16384, four times as much: 231,928,233,984 + 113,246,208.
  EXPECT_EQ(layer.flopsOf("bert.linear", 512, CostTarget::Cuda), 231928233984.0 + 113246208.0);
  // The CPU runs the same products.
  EXPECT_EQ(layer.flopsOf("bert.linear", 512, CostTarget::Cpu), 231928233984.0 + 113246208.0);
}

TEST(StepCost, GemmsRunAtTheirOperandsPrecision) {
  Ops half(kLayerArguments, kLayerLinears);
  auto kernels = estimateOpKernels(half.op("bert.linear"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].unit, ComputeUnit::HalfGemm);
  // x [32, 128, 768] and y read and written once in bf16, W and b once:
  // 2 * 3,145,728 * 2 + 589,824 * 2 + 768 * 2 = 12,582,912 + 1,179,648 + 1,536.
  EXPECT_EQ(kernels[0].bytes, 13764096.0);

  Ops single("%x: tensor<?x?x768xf32>, %w: tensor<768x768xf32>, %b: tensor<768xf32>", R"mlir(
  %q = bert.linear %x, %w, %b : (tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
)mlir");
  kernels = estimateOpKernels(single.op("bert.linear"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].unit, ComputeUnit::Fp32Gemm);
}

TEST(StepCost, LinearGradientsAreOneGemmEach) {
  Ops grads("%dy: tensor<?x?x3072xbf16>, %w: tensor<3072x768xbf16>, %x: tensor<?x?x768xbf16>",
            R"mlir(
  %dx = bert.linear_grad_input %dy, %w : (tensor<?x?x3072xbf16>, tensor<3072x768xbf16>) -> tensor<?x?x768xbf16>
  %dw = bert.linear_grad_weight %dy, %x : (tensor<?x?x3072xbf16>, tensor<?x?x768xbf16>) -> tensor<3072x768xf32>
)mlir");
  // Each 2 B S H I: 2 * 4096 * 768 * 3072 = 19,327,352,832 at seq 128.
  EXPECT_EQ(grads.flopsOf("bert.linear_grad_input", 128, CostTarget::Cuda), 19327352832.0);
  EXPECT_EQ(grads.flopsOf("bert.linear_grad_weight", 128, CostTarget::Cuda), 19327352832.0);
  auto weight =
      estimateOpKernels(grads.op("bert.linear_grad_weight"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(weight.size(), 1u);
  EXPECT_EQ(weight[0].unit, ComputeUnit::HalfGemm);
  // dy and x read in bf16, dW written in fp32:
  // 4096 * 3072 * 2 + 4096 * 768 * 2 + 3072 * 768 * 4 = 25,165,824 + 6,291,456 + 9,437,184.
  EXPECT_EQ(weight[0].bytes, 40894464.0);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// Self-attention over q, k, v [B, S, 768] in bf16 (or `element`) with 12 heads with
// `dropout`, and its gradient from the forward's output and lse.
const char *kAttentionArguments = "%q: tensor<?x?x768xbf16>, %mask: tensor<?x?xi32>";
const char *kFp32AttentionArguments = "%q: tensor<?x?x768xf32>, %mask: tensor<?x?xi32>";
std::string attention(const char *dropout, llvm::StringRef element = "bf16") {
  std::string text = std::string(R"mlir(
  %ctx, %lse = bert.attention %q, %q, %q, %mask {heads = 12 : i64, dropout = )mlir") +
                     dropout + R"mlir( : f32, stream = 1 : i32}
      : (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<?x?xi32>)
      -> (tensor<?x?x768xbf16>, tensor<?x12x?xf32>)
  %dq, %dk, %dv = bert.attention_grad %ctx, %q, %q, %q, %mask, %ctx, %lse {heads = 12 : i64, dropout = )mlir" +
                     dropout + R"mlir( : f32, stream = 1 : i32}
      : (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<?x?x768xbf16>,
         tensor<?x?xi32>, tensor<?x?x768xbf16>, tensor<?x12x?xf32>)
      -> (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<?x?x768xbf16>)
)mlir";
  for (size_t at = text.find("bf16"); at != std::string::npos;
       at = text.find("bf16", at + element.size()))
    text.replace(at, 4, element.str());
  return text;
}

// One product (QK^T or PV, every head) is 2 B heads S^2 d = 2 B S^2 H flops:
//   seq 128: 2 * 32 * 16,384 * 768 = 805,306,368
//   seq 512: 2 * 32 * 262,144 * 768 = 12,884,901,888
// and there are B heads S^2 scores: 6,291,456 at seq 128, 100,663,296 at seq 512.
constexpr double kProduct128 = 805306368, kProduct512 = 12884901888;
constexpr double kScores128 = 6291456, kScores512 = 100663296;

TEST(StepCost, CudaAttentionForwardOfFp32IsTwoProductsOnCudaCores) {
  Ops ops(kFp32AttentionArguments, attention("0.0", "f32"));
  auto kernels = estimateOpKernels(ops.op("bert.attention"), kBatch, 512, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].unit, ComputeUnit::Fp32Cores);
  // QK^T and PV, and 8 flops per score for the online softmax.
  EXPECT_EQ(kernels[0].flops, 2 * kProduct512 + 8 * kScores512);
  // q, k, v read and ctx written (16384 * 768 * 4 = 50,331,648 B each), the mask
  // (16384 * 4 = 65,536) and the fp32 lse per query row (32 * 12 * 512 * 4 = 786,432):
  // 201,326,592 + 65,536 + 786,432.
  EXPECT_EQ(kernels[0].bytes, 202178560.0);
}

TEST(StepCost, CudaAttentionOfSixteenBitsRunsItsProductsOnTensorCores) {
  Ops ops(kAttentionArguments, attention("0.1"));
  auto forward = estimateOpKernels(ops.op("bert.attention"), kBatch, 512, CostTarget::Cuda);
  ASSERT_EQ(forward.size(), 2u);
  // QK^T and PV as warp matrix products (one pass over the keys); in the same launch, per
  // score its probability (8 flops) and its dropout draw (25), on CUDA cores.
  EXPECT_EQ(forward[0].unit, ComputeUnit::HalfOwnMatrix);
  EXPECT_EQ(forward[0].flops, 2 * kProduct512);
  // q, k, v, ctx in bf16 (25,165,824 B each), the mask and the lse.
  EXPECT_EQ(forward[0].bytes, 101515264.0);
  EXPECT_EQ(forward[0].launches, 1);
  EXPECT_EQ(forward[1].unit, ComputeUnit::Fp32Cores);
  EXPECT_EQ(forward[1].flops, (8 + 25) * kScores512);
  EXPECT_EQ(forward[1].bytes, 0.0);
  EXPECT_EQ(forward[1].launches, 0);

  auto backward = estimateOpKernels(ops.op("bert.attention_grad"), kBatch, 128, CostTarget::Cuda);
  // The row term, then each gradient kernel's products and its other work.
  ASSERT_EQ(backward.size(), 5u);
  EXPECT_EQ(backward[0].unit, ComputeUnit::Fp32Cores);
  EXPECT_EQ(backward[1].unit, ComputeUnit::HalfOwnMatrix);
  EXPECT_EQ(backward[1].flops, 4 * kProduct128);
  // dctx, q, k, v (4 * 6,291,456), the mask (16,384), the lse and the row term (2 *
  // 196,608) read, dk and dv written, and the dropout mask's bits: 4 words of 32 keys per
  // query row, 32 * 12 * 128 * 4 * 4 = 786,432 B.
  EXPECT_EQ(backward[1].bytes, 25575424.0 + 2 * 6291456.0 + 786432.0);
  EXPECT_EQ(backward[2].unit, ComputeUnit::Fp32Cores);
  EXPECT_EQ(backward[2].flops, (7 + 4 + 25) * kScores128);
  EXPECT_EQ(backward[2].launches, 0);
  // The query kernel reads those bits instead of drawing the mask.
  EXPECT_EQ(backward[3].unit, ComputeUnit::HalfOwnMatrix);
  EXPECT_EQ(backward[3].flops, 3 * kProduct128);
  EXPECT_EQ(backward[3].bytes, 25575424.0 + 6291456.0 + 786432.0);
  EXPECT_EQ(backward[4].flops, (7 + 4) * kScores128);
}

TEST(StepCost, CudaAttentionBackwardStartsFromTheSavedLse) {
  Ops ops(kFp32AttentionArguments, attention("0.0", "f32"));
  mlir::Operation *grad = ops.op("bert.attention_grad");
  auto kernels = estimateOpKernels(grad, kBatch, 128, CostTarget::Cuda);
  // The row term dctx . ctx, the key/value and the query kernels; no forward again.
  ASSERT_EQ(kernels.size(), 3u);
  for (const KernelWork &kernel : kernels)
    EXPECT_EQ(kernel.unit, ComputeUnit::Fp32Cores);
  // The row term: a dot of d = 64 per (row, head), 2 B S H = 2 * 4096 * 768 = 6,291,456;
  // it reads dctx and ctx (2 * 12,582,912 B) and writes 32 * 12 * 128 * 4 = 196,608 B.
  EXPECT_EQ(kernels[0].flops, 6291456.0);
  EXPECT_EQ(kernels[0].bytes, 25362432.0);
  // Products: 4 (QK^T, dV, dP, dK) + 3 (QK^T, dP, dQ) = 7. Both kernels recompute
  // probabilities from the lse (7) and score gradients (4) per score.
  EXPECT_EQ(kernels[1].flops, 4 * kProduct128 + 11 * kScores128);
  EXPECT_EQ(kernels[2].flops, 3 * kProduct128 + 11 * kScores128);
  // Each reads dctx, q, k, v (4 * 12,582,912), the mask (16,384), the lse and the row term
  // (2 * 196,608): 50,741,248; the first writes dk and dv, the second dq.
  EXPECT_EQ(kernels[1].bytes, 50741248.0 + 2 * 12582912.0);
  EXPECT_EQ(kernels[2].bytes, 50741248.0 + 12582912.0);
  // 7 products and 22 flops per score, plus the row term:
  // 7 * 805,306,368 + 22 * 6,291,456 + 6,291,456 = 5,637,144,576 + 138,412,032 + 6,291,456.
  EXPECT_EQ(estimateOpFlops(grad, kBatch, 128, CostTarget::Cuda), 5781848064.0);
  // The same at seq 512: 7 * 12,884,901,888 + 22 * 100,663,296 + 2 * 16384 * 768.
  EXPECT_EQ(estimateOpFlops(grad, kBatch, 512, CostTarget::Cuda),
            7 * kProduct512 + 22 * kScores512 + 25165824.0);
}

TEST(StepCost, CpuAttentionRunsItsProductsAsGemms) {
  Ops ops(kAttentionArguments, attention("0.0"));
  auto forward = estimateOpKernels(ops.op("bert.attention"), kBatch, 128, CostTarget::Cpu);
  ASSERT_EQ(forward.size(), 2u);
  // Two products through mixedGemm (bf16 tiles converted to fp32), softmax in a loop.
  EXPECT_EQ(forward[0].unit, ComputeUnit::HalfGemm);
  EXPECT_EQ(forward[0].flops, 2 * kProduct128);
  EXPECT_EQ(forward[1].unit, ComputeUnit::Fp32Cores);
  EXPECT_EQ(forward[1].flops, 8 * kScores128);
  // The backward recomputes QK^T and adds dctx V^T, dV, dQ and dK: 5 products; per score
  // the probability from the lse (7) and its score gradient (4).
  auto backward = estimateOpKernels(ops.op("bert.attention_grad"), kBatch, 128, CostTarget::Cpu);
  ASSERT_EQ(backward.size(), 2u);
  EXPECT_EQ(backward[0].flops, 5 * kProduct128);
  EXPECT_EQ(backward[1].flops, 11 * kScores128);
  // dctx, q, k, v, ctx read and dq, dk, dv written (4096 * 768 * 2 = 6,291,456 B each), the
  // mask (4096 * 4) and the lse (32 * 12 * 128 * 4): 50,331,648 + 16,384 + 196,608.
  EXPECT_EQ(backward[0].bytes, 50544640.0);
}

TEST(StepCost, AttentionDropoutDrawsItsMaskOnceInEachPass) {
  // A decision counts 25 flops (a 200-flop Philox call decides eight scores). Each pass
  // draws it once per score: the CUDA backward's key/value kernel stores the mask as bits
  // for its query kernel.
  auto extra = [&](llvm::StringRef name, CostTarget target) {
    Ops with(kAttentionArguments, attention("1.000000e-01"));
    Ops without(kAttentionArguments, attention("0.0"));
    return with.flopsOf(name, 128, target) - without.flopsOf(name, 128, target);
  };
  EXPECT_EQ(extra("bert.attention", CostTarget::Cuda), 25 * kScores128);
  EXPECT_EQ(extra("bert.attention_grad", CostTarget::Cuda), 25 * kScores128);
  EXPECT_EQ(extra("bert.attention", CostTarget::Cpu), 25 * kScores128);
  EXPECT_EQ(extra("bert.attention_grad", CostTarget::Cpu), 25 * kScores128);
}

//===----------------------------------------------------------------------===//
// The roofline and the device models
//===----------------------------------------------------------------------===//

// Round numbers: 1e12 fp32 GEMM, 1e13 16-bit GEMM, 1e11 own kernels, 1e11 B/s, 1 us.
const DeviceModel kRound{"round", CostTarget::Cuda, 1e12, 1e13, 1e11, 1e11, 1e-6, "bf16"};

TEST(StepCost, AKernelTakesItsSlowerSideAndItsLaunch) {
  // 1e9 flops at 1e13 = 100 us against 1e6 B at 1e11 = 10 us: compute-bound.
  EXPECT_DOUBLE_EQ(estimateKernelSeconds({ComputeUnit::HalfGemm, 1e9, 1e6}, kRound), 101e-6);
  // The same flops as fp32 GEMM: 1 ms.
  EXPECT_DOUBLE_EQ(estimateKernelSeconds({ComputeUnit::Fp32Gemm, 1e9, 1e6}, kRound), 1001e-6);
  // 1e6 flops on own kernels = 10 us against 1e8 B = 1 ms: memory-bound.
  EXPECT_DOUBLE_EQ(estimateKernelSeconds({ComputeUnit::Fp32Cores, 1e6, 1e8}, kRound), 1001e-6);
  // Work inside another launch pays none.
  EXPECT_DOUBLE_EQ(estimateKernelSeconds({ComputeUnit::Fp32Cores, 1e6, 1e8, 0}, kRound), 1e-3);
}

TEST(StepCost, TheDeviceModelsAreTheDatasheetsAtTheirFractions) {
  // A100: 19.5 TFLOP/s fp32, 312 bf16 tensor cores, 1555 GB/s; GEMMs at 0.7 of peak,
  // bertc's own kernels at 0.5 of the fp32 peak, 0.8 of the bandwidth.
  const DeviceModel *a100 = bertc::gpuDeviceModel("sm_80");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->target, CostTarget::Cuda);
  EXPECT_DOUBLE_EQ(a100->fp32GemmFlopsPerSecond, 13.65e12);
  EXPECT_DOUBLE_EQ(a100->halfGemmFlopsPerSecond, 218.4e12);
  EXPECT_DOUBLE_EQ(a100->coreFlopsPerSecond, 9.75e12);
  EXPECT_DOUBLE_EQ(a100->bytesPerSecond, 1244e9);
  EXPECT_STREQ(a100->halfPrecision, "bf16");
  // T4: 8.1 fp32, 65 fp16 tensor cores, 320 GB/s.
  const DeviceModel *t4 = bertc::gpuDeviceModel("sm_75");
  ASSERT_NE(t4, nullptr);
  EXPECT_DOUBLE_EQ(t4->halfGemmFlopsPerSecond, 45.5e12);
  EXPECT_DOUBLE_EQ(t4->coreFlopsPerSecond, 4.05e12);
  EXPECT_DOUBLE_EQ(t4->bytesPerSecond, 256e9);
  EXPECT_STREQ(t4->halfPrecision, "fp16");
  EXPECT_EQ(bertc::gpuDeviceModel("sm_61"), nullptr);
  EXPECT_EQ(bertc::deviceModel("").target, CostTarget::Cpu);
}

TEST(StepCost, BackwardAttentionOfFp32OnAnA100IsPricedAtTheFp32CoreRate) {
  Ops ops(kFp32AttentionArguments, attention("0.0", "f32"));
  const DeviceModel &a100 = *bertc::gpuDeviceModel("sm_80");
  // At seq 512 both gradient kernels are compute-bound at 9.75e12 flop/s; the row term
  // (2 B S H flops, dctx and ctx read and one fp32 per row written) is memory-bound.
  //   kv grads: 4 P + 11 S     = 51,539,607,552 + 1,107,296,256
  //   q grads:  3 P + 11 S     = 38,654,705,664 + 1,107,296,256
  //   row term: (2 * 50,331,648 + 786,432) B / 1.244e12 B/s
  double computeFlops = 7 * kProduct512 + 22 * kScores512;
  double rowTermBytes = 2 * 50331648.0 + 786432.0;
  double expected = computeFlops / 9.75e12 + rowTermBytes / 1244e9 + 3 * 5e-6;
  EXPECT_NEAR(estimateOpSeconds(ops.op("bert.attention_grad"), kBatch, 512, a100), expected,
              1e-12 * expected);
  EXPECT_GT(expected, 0.0095);
}

TEST(StepCost, BackwardAttentionOfBf16OnAnA100IsPricedAtTheOwnMatrixRate) {
  Ops ops(kAttentionArguments, attention("0.0"));
  const DeviceModel &a100 = *bertc::gpuDeviceModel("sm_80");
  // The products at the rate an H200 ran them (0.03 of 989 TFLOP/s on 132 SMs at 1.98 GHz)
  // scaled to the A100's 108 SMs at 1.41 GHz, 17.29e12 flop/s, each kernel's 11 flops a
  // score after them at 9.75e12; every part compute-bound but the row term.
  const double ownMatrixRate = 0.03 * 989e12 * (108 * 1.41) / (132 * 1.98);
  double expected = 7 * kProduct512 / ownMatrixRate + 22 * kScores512 / 9.75e12 +
                    (2 * 25165824.0 + 786432.0) / 1244e9 + 3 * 5e-6;
  EXPECT_NEAR(estimateOpSeconds(ops.op("bert.attention_grad"), kBatch, 512, a100), expected,
              1e-12 * expected);
  // About 5.5 ms, below the CUDA cores' 9.5.
  EXPECT_LT(expected, 0.006);
}

} // namespace
