//===- attention_cost_test.cpp - the tensor-core attention's price --------===//
//
// BERT-base self-attention (B = 32, 12 heads of d = 64, hidden H = 768) in bf16 with
// head_chunk > 0: what its CostOpInterface says the strided-batched GEMMs and the row
// kernels compute and move, and the seconds the A100 (sm_80) roofline makes of them, at
// seq 128 and 512, against counts worked out by hand in the comments. Beside it, the
// fused kernels (on tensor cores for bf16) on the same GPU and on sm_90, which the fit driver
// weighs it against.
//
// sm_80's rates (DeviceModel.cpp): bf16 GEMMs 0.7 x 312 = 218.4 TFLOP/s, bertc's kernels
// 0.5 x 19.5 = 9.75 TFLOP/s, memory 0.8 x 1555 = 1244 GB/s, 5 us a launch.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/DeviceModel.h"
#include "bertc/Analysis/StepCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using bertc::estimateKernelSeconds;
using bertc::estimateOpKernels;
using bertc::estimateOpSeconds;
using mlir::bert::ComputeUnit;
using mlir::bert::CostTarget;
using mlir::bert::KernelWork;

constexpr int64_t kBatch = 32;
constexpr double kHalfGemm = 218.4e12, kCores = 9.75e12, kMemory = 1244e9, kLaunch = 5e-6;

/// bert.attention and its gradient over q [B, S, 768] bf16, 12 heads, `headChunk` heads at
/// a time, no dropout.
class Attention {
public:
  explicit Attention(int64_t headChunk) {
    context.loadDialect<mlir::bert::BertDialect, mlir::func::FuncDialect>();
    std::string attrs = "{heads = 12 : i64, dropout = 0.0 : f32, stream = 1 : i32, head_chunk = " +
                        std::to_string(headChunk) + " : i64}";
    module = mlir::parseSourceString<mlir::ModuleOp>(
        "func.func @f(%q: tensor<?x?x768xbf16>, %mask: tensor<?x?xi32>) {\n"
        "  %ctx, %lse = bert.attention %q, %q, %q, %mask " +
            attrs +
            " : (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, "
            "tensor<?x?xi32>) -> (tensor<?x?x768xbf16>, tensor<?x12x?xf32>)\n"
            "  %dq, %dk, %dv = bert.attention_grad %ctx, %q, %q, %q, %mask, %ctx, %lse " +
            attrs +
            " : (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, "
            "tensor<?x?x768xbf16>, tensor<?x?xi32>, tensor<?x?x768xbf16>, tensor<?x12x?xf32>) "
            "-> (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<?x?x768xbf16>)\n"
            "  return\n}\n",
        &context);
    EXPECT_TRUE(module);
  }

  mlir::Operation *forward() { return first("bert.attention"); }
  mlir::Operation *backward() { return first("bert.attention_grad"); }

private:
  mlir::Operation *first(llvm::StringRef name) {
    mlir::Operation *found = nullptr;
    if (module)
      module->walk([&](mlir::Operation *op) {
        if (!found && op->getName().getStringRef() == name)
          found = op;
      });
    EXPECT_NE(found, nullptr) << name.str();
    return found;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

const bertc::DeviceModel &a100() { return *bertc::gpuDeviceModel("sm_80"); }

/// Expects `kernel` to be `unit` work of exactly `flops` and `bytes` in `launches` launches.
void expectKernel(const KernelWork &kernel, ComputeUnit unit, double flops, double bytes,
                  int launches) {
  EXPECT_EQ(kernel.unit, unit);
  EXPECT_EQ(kernel.flops, flops);
  EXPECT_EQ(kernel.bytes, bytes);
  EXPECT_EQ(kernel.launches, launches);
}

// At seq 128: B heads S^2 = 32 * 12 * 16,384 = 6,291,456 scores; a product over them is
// 2 * 64 flops a score, 805,306,368; a [B, S, H] bf16 tensor is 4096 * 768 * 2 = 6,291,456 B;
// the mask 4096 * 4 = 16,384 B; the lse 32 * 12 * 128 * 4 = 196,608 B.
TEST(AttentionCost, TensorCoreForwardAtSeq128) {
  Attention attention(12);
  auto kernels = estimateOpKernels(attention.forward(), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 3u);
  // QK^T: one bf16 GEMM over the chunk's 12 heads and the sequences, after the kernel that
  // fills its and PV's pointer arrays; reads q and k, writes the fp32 scores (4 B each).
  // 2 * 6,291,456 + 4 * 6,291,456 = 37,748,736 B.
  expectKernel(kernels[0], ComputeUnit::HalfGemm, 805306368, 37748736, 2);
  // The rows, one launch for the 12-head chunk: 8 flops a score; the scores read (4 B),
  // the probabilities written (2 B), the mask and the lse: 37,748,736 + 16,384 + 196,608.
  expectKernel(kernels[1], ComputeUnit::Fp32Cores, 8 * 6291456, 37961728, 1);
  // PV: reads P (2 B a score) and v, writes ctx: 12,582,912 + 2 * 6,291,456.
  expectKernel(kernels[2], ComputeUnit::HalfGemm, 805306368, 25165824, 1);
  // Every kernel is bound by its bytes on the A100:
  //   QK^T  37,748,736 / 1244e9 + 2 launches; rows 37,961,728 / 1244e9 + 1;
  //   PV    25,165,824 / 1244e9 + 1.
  double expected = (37748736.0 + 37961728.0 + 25165824.0) / kMemory + 4 * kLaunch;
  EXPECT_NEAR(estimateOpSeconds(attention.forward(), kBatch, 128, a100()), expected,
              1e-12 * expected);
}

TEST(AttentionCost, TensorCoreBackwardAtSeq128) {
  Attention attention(12);
  auto kernels = estimateOpKernels(attention.backward(), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 3u);
  // QK^T and dctx V^T: one GEMM (after the pointer fill of the chunk's three GEMMs), the
  // two products' layouts being one; read q, k, dctx and v, write two fp32 blocks:
  // 4 * 6,291,456 + 8 * 6,291,456 = 75,497,472 B.
  expectKernel(kernels[0], ComputeUnit::HalfGemm, 2 * 805306368.0, 75497472, 2);
  // The rows: the probability from the lse (7) and its score gradient (4) a score, and
  // each row's term dctx . ctx (2 B S H = 6,291,456 flops); read both blocks (8 B), write
  // P*Z and dS (4 B), read the mask, the lse, and dctx and ctx for the row terms:
  // 12 * 6,291,456 + 16,384 + 196,608 + 2 * 6,291,456 = 88,293,376 B.
  expectKernel(kernels[1], ComputeUnit::Fp32Cores, 11 * 6291456.0 + 6291456, 88293376, 1);
  // dV with dK (one layout, one GEMM), then dQ: each reads one 16-bit block and a tensor
  // and writes a gradient: 6 * 6,291,456 + 3 * 2 * 6,291,456 = 75,497,472 B.
  expectKernel(kernels[2], ComputeUnit::HalfGemm, 3 * 805306368.0, 75497472, 2);
}

// At seq 512 the scores grow sixteenfold: 100,663,296 of them, a product 12,884,901,888
// flops; a [B, S, H] bf16 tensor is 25,165,824 B, the mask 65,536, the lse 786,432.
TEST(AttentionCost, TensorCoreAttentionAtSeq512) {
  Attention attention(12);
  auto forward = estimateOpKernels(attention.forward(), kBatch, 512, CostTarget::Cuda);
  ASSERT_EQ(forward.size(), 3u);
  // QK^T: 2 * 25,165,824 + 4 * 100,663,296 = 452,984,832 B.
  expectKernel(forward[0], ComputeUnit::HalfGemm, 12884901888, 452984832, 2);
  // Rows: 6 * 100,663,296 + 65,536 + 786,432 = 604,831,744 B.
  expectKernel(forward[1], ComputeUnit::Fp32Cores, 8 * 100663296.0, 604831744, 1);
  // PV: 2 * 100,663,296 + 2 * 25,165,824 = 251,658,240 B.
  expectKernel(forward[2], ComputeUnit::HalfGemm, 12884901888, 251658240, 1);
  // Still bound by bytes: QK^T computes in 12,884,901,888 / 218.4e12 = 59 us and moves
  // its bytes in 364 us.
  double expected = (452984832.0 + 604831744.0 + 251658240.0) / kMemory + 4 * kLaunch;
  EXPECT_NEAR(estimateOpSeconds(attention.forward(), kBatch, 512, a100()), expected,
              1e-12 * expected);

  auto backward = estimateOpKernels(attention.backward(), kBatch, 512, CostTarget::Cuda);
  ASSERT_EQ(backward.size(), 3u);
  // QK^T and dctx V^T: 4 * 25,165,824 + 8 * 100,663,296 = 905,969,664 B.
  // Rows with their row terms (2 * 16,384 * 768 flops):
  //   12 * 100,663,296 + 65,536 + 786,432 + 2 * 25,165,824 = 1,259,143,168 B.
  // dV, dQ, dK: 6 * 25,165,824 + 6 * 100,663,296 = 754,974,720 B.
  expectKernel(backward[0], ComputeUnit::HalfGemm, 2 * 12884901888.0, 905969664, 2);
  expectKernel(backward[1], ComputeUnit::Fp32Cores, 11 * 100663296.0 + 25165824, 1259143168, 1);
  expectKernel(backward[2], ComputeUnit::HalfGemm, 3 * 12884901888.0, 754974720, 2);
  // Every kernel is bound by its bytes: the rows compute in 114 us and move in 1012 us.
  expected = (905969664.0 + 1259143168.0 + 754974720.0) / kMemory + 5 * kLaunch;
  EXPECT_NEAR(estimateOpSeconds(attention.backward(), kBatch, 512, a100()), expected,
              1e-12 * expected);
}

TEST(AttentionCost, ChunksOfFewerHeadsLaunchTheRowsMoreOften) {
  // 12 heads 5 at a time: chunks of 5, 5 and 2, so three row launches, three pointer fills
  // (one per chunk, before its first GEMM) and three GEMMs per product, or per pair of
  // products in the backward.
  Attention attention(5);
  auto forward = estimateOpKernels(attention.forward(), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(forward.size(), 3u);
  EXPECT_EQ(forward[0].launches, 6);
  EXPECT_EQ(forward[1].launches, 3);
  EXPECT_EQ(forward[1].bytes, 37961728.0);
  auto backward = estimateOpKernels(attention.backward(), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(backward.size(), 3u);
  EXPECT_EQ(backward[0].launches, 6); // QK^T with dctx V^T
  EXPECT_EQ(backward[1].launches, 3); // the rows with their row terms
  EXPECT_EQ(backward[2].launches, 6); // dV with dK, and dQ
}

// The fused kernels (bf16: their products as warp matrix products, step_cost_test.cpp
// counts them) are priced at the rate an H200 ran the earlier two-pass kernels' products,
// 0.03 of its 989 TFLOP/s tensor-core peak, per SM and GHz (132 SMs at 1.98 GHz): 29.67
// TFLOP/s on sm_90, and on the A100 (108 SMs at 1.41 GHz) 29.67e12 * 152.28 / 261.36 =
// 17.29 TFLOP/s. At seq 512 the forward is 2 products over d = 64, 25,769,803,776 flops,
// then 8 flops a score on CUDA cores, 805,306,368, in one launch: on sm_90 0.8686 + 0.0240
// ms, on the A100 1.4904 + 0.0826 ms. The chunked kernels, cuBLASLt's GEMMs and the row
// kernels, are then the cheaper ones on both GPUs, forward and backward (on the A100 1.07
// ms forward at seq 512).
TEST(AttentionCost, FusedProductsAtTheRateAnH200RanThemPerSmAndGigahertz) {
  const double h200Rate = 0.03 * 989e12;
  const struct {
    const char *arch;
    double ownMatrixRate, coreRate;
  } gpus[] = {{"sm_80", h200Rate * (108 * 1.41) / (132 * 1.98), kCores},
              {"sm_90", h200Rate, 0.5 * 67e12}};
  Attention fused(0), chunked(12);
  for (const auto &gpu : gpus) {
    const bertc::DeviceModel &model = *bertc::gpuDeviceModel(gpu.arch);
    const double fusedForward =
        2 * 12884901888.0 / gpu.ownMatrixRate + 8 * 100663296.0 / gpu.coreRate + kLaunch;
    EXPECT_NEAR(estimateOpSeconds(fused.forward(), kBatch, 512, model), fusedForward,
                1e-12 * fusedForward)
        << gpu.arch;
    for (int64_t seq : {128, 512}) {
      EXPECT_GT(estimateOpSeconds(fused.forward(), kBatch, seq, model),
                estimateOpSeconds(chunked.forward(), kBatch, seq, model))
          << gpu.arch << " seq " << seq;
      EXPECT_GT(estimateOpSeconds(fused.backward(), kBatch, seq, model),
                estimateOpSeconds(chunked.backward(), kBatch, seq, model))
          << gpu.arch << " seq " << seq;
    }
  }
}

} // namespace
