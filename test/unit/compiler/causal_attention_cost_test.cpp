//===- causal_attention_cost_test.cpp - a decoder's attention's price -----===//
//
// A Llama-style attention (B = 2, seq 1024, 32 query heads of d = 128 over 8 key/value
// heads: q [B, S, 4096], k and v [B, S, 1024], bf16, no dropout): what its CostOpInterface
// says the kernels compute and move, against counts worked out by hand in the comments.
// Causal: the CPU kernels and the CUDA fused ones compute only the (query, key) pairs a
// query reaches, S (S + 1) / 2 per head, about half; the CUDA chunked GEMMs compute every
// score, so their price does not change. Grouped-query heads change no flops but the key
// and value bytes, and the chunked backward's sum of each group's dk and dv.
//
// Sizes: full scores B heads S^2 = 2 * 32 * 1,048,576 = 67,108,864; reached ones
// 2 * 32 * 1024 * 1025 / 2 = 33,587,200. Bytes: q (and ctx, dctx, dq) 2 * 1024 * 4096 * 2 =
// 16,777,216; k (and v, dk, dv) 2 * 1024 * 1024 * 2 = 4,194,304; the mask 8,192; the lse
// 2 * 32 * 1024 * 4 = 262,144.
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

using bertc::estimateOpKernels;
using bertc::estimateOpSeconds;
using mlir::bert::ComputeUnit;
using mlir::bert::CostTarget;
using mlir::bert::KernelWork;

constexpr int64_t kBatch = 2, kSeq = 1024;
constexpr double kFullScores = 67108864, kReachedScores = 33587200;
constexpr double kQuery = 16777216, kKey = 4194304, kMask = 8192, kLse = 262144;

/// bert.attention and its gradient over q [B, S, heads * d] bf16 and k, v [B, S, kvHeads * d],
/// `headChunk` heads at a time, causal or not.
class Attention {
public:
  Attention(int64_t headDim, int64_t kvHeads, bool causal, int64_t headChunk) {
    context.loadDialect<mlir::bert::BertDialect, mlir::func::FuncDialect>();
    const std::string q = "tensor<?x?x" + std::to_string(32 * headDim) + "xbf16>";
    const std::string kv = "tensor<?x?x" + std::to_string(kvHeads * headDim) + "xbf16>";
    const std::string attrs =
        "{heads = 32 : i64, kv_heads = " + std::to_string(kvHeads) + " : i64, " +
        (causal ? "causal, " : "") +
        "dropout = 0.0 : f32, stream = 1 : i32, head_chunk = " + std::to_string(headChunk) +
        " : i64}";
    module = mlir::parseSourceString<mlir::ModuleOp>(
        "func.func @f(%q: " + q + ", %kv: " + kv + ", %mask: tensor<?x?xi32>) {\n" +
            "  %ctx, %lse = bert.attention %q, %kv, %kv, %mask " + attrs + " : (" + q + ", " + kv +
            ", " + kv + ", tensor<?x?xi32>) -> (" + q + ", tensor<?x32x?xf32>)\n" +
            "  %dq, %dk, %dv = bert.attention_grad %ctx, %q, %kv, %kv, %mask, %ctx, %lse " + attrs +
            " : (" + q + ", " + q + ", " + kv + ", " + kv + ", tensor<?x?xi32>, " + q +
            ", tensor<?x32x?xf32>) -> (" + q + ", " + kv + ", " + kv + ")\n  return\n}\n",
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

double totalFlops(const llvm::SmallVector<KernelWork, 1> &kernels) {
  double flops = 0;
  for (const KernelWork &kernel : kernels)
    flops += kernel.flops;
  return flops;
}

const bertc::DeviceModel &h100() { return *bertc::gpuDeviceModel("sm_90"); }

// The fused forward on tensor cores (bf16, d = 128): 2 products of 2 * 128 flops a pair,
// then 8 flops a pair on CUDA cores, over the reached pairs: 512 * 33,587,200 =
// 17,196,646,400 and 268,697,600. It moves q, k, v, the mask, ctx and the lse:
// 2 * 16,777,216 + 2 * 4,194,304 + 8,192 + 262,144 = 42,213,376 B.
TEST(CausalAttentionCost, FusedForwardIsPricedAtTheReachedPairs) {
  Attention causal(128, 8, true, 0);
  auto kernels = estimateOpKernels(causal.forward(), kBatch, kSeq, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].unit, ComputeUnit::HalfOwnMatrix);
  EXPECT_EQ(kernels[0].flops, 512 * kReachedScores);
  EXPECT_EQ(kernels[0].bytes, 2 * kQuery + 2 * kKey + kMask + kLse);
  EXPECT_EQ(kernels[1].flops, 8 * kReachedScores);
  Attention full(128, 8, false, 0);
  EXPECT_EQ(totalFlops(estimateOpKernels(full.forward(), kBatch, kSeq, CostTarget::Cuda)),
            520 * kFullScores);
}

// Forward and backward, the seconds on an H100 and the CPU's flops: about half the full
// attention's (the pairs' ratio is 1025 / 2048; the bytes, which do not halve, add a
// little).
TEST(CausalAttentionCost, CausalIsPricedAboutHalf) {
  Attention causal(128, 8, true, 0), full(128, 8, false, 0);
  for (auto op : {&Attention::forward, &Attention::backward}) {
    const double causalSeconds = estimateOpSeconds((causal.*op)(), kBatch, kSeq, h100());
    const double fullSeconds = estimateOpSeconds((full.*op)(), kBatch, kSeq, h100());
    EXPECT_GT(causalSeconds, 0.45 * fullSeconds);
    EXPECT_LT(causalSeconds, 0.55 * fullSeconds);
    const double causalFlops =
        totalFlops(estimateOpKernels((causal.*op)(), kBatch, kSeq, CostTarget::Cpu));
    const double fullFlops =
        totalFlops(estimateOpKernels((full.*op)(), kBatch, kSeq, CostTarget::Cpu));
    EXPECT_DOUBLE_EQ(causalFlops / fullFlops, kReachedScores / kFullScores);
  }
}

// cuBLASLt's GEMMs compute every score whatever the mask: the chunked kernels cost what
// they cost without it.
TEST(CausalAttentionCost, ChunkedGemmsComputeEveryScore) {
  Attention causal(128, 8, true, 8), full(128, 8, false, 8);
  for (auto op : {&Attention::forward, &Attention::backward}) {
    auto causalKernels = estimateOpKernels((causal.*op)(), kBatch, kSeq, CostTarget::Cuda);
    auto fullKernels = estimateOpKernels((full.*op)(), kBatch, kSeq, CostTarget::Cuda);
    ASSERT_EQ(causalKernels.size(), fullKernels.size());
    for (size_t i = 0; i < causalKernels.size(); ++i) {
      EXPECT_EQ(causalKernels[i].flops, fullKernels[i].flops) << i;
      EXPECT_EQ(causalKernels[i].bytes, fullKernels[i].bytes) << i;
    }
  }
}

// The chunked backward with 8 heads a chunk (4 chunks of 2 groups of 4): QK^T with dctx V^T
// read q, dctx, k and v (2 * 16,777,216 + 2 * 4,194,304 = 41,943,040 B) and write two fp32
// blocks; dV with dK, and dQ, read dctx, q, k and their blocks, and write dq, and dv and dk
// per query head in fp32 (2 * 2 * 1024 * 4096 * 4 = 67,108,864 B); one kernel per chunk
// adds each group's up (16,777,216 adds), reading those and writing dv and dk.
TEST(CausalAttentionCost, GroupedChunkedBackwardSumsEachGroup) {
  Attention attention(128, 8, true, 8);
  auto kernels = estimateOpKernels(attention.backward(), kBatch, kSeq, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 4u);
  EXPECT_EQ(kernels[0].bytes, 41943040 + 8 * kFullScores);
  EXPECT_EQ(kernels[2].bytes, 3 * kQuery + kKey + 67108864 + 3 * 2 * kFullScores);
  EXPECT_EQ(kernels[3].unit, ComputeUnit::Fp32Cores);
  EXPECT_EQ(kernels[3].flops, 16777216);
  EXPECT_EQ(kernels[3].bytes, 67108864 + 2 * kKey);
  EXPECT_EQ(kernels[3].launches, 4);
}

// A head dimension of 80 runs on tensor cores rounded up to 96 (not 128), and on the CPU
// over its own 80: 2 products of 2 * 96 flops a reached pair.
TEST(CausalAttentionCost, HeadDimension80RunsAs96OnTensorCores) {
  Attention attention(80, 8, true, 0);
  auto kernels = estimateOpKernels(attention.forward(), kBatch, kSeq, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].unit, ComputeUnit::HalfOwnMatrix);
  EXPECT_EQ(kernels[0].flops, 2 * 2 * 96 * kReachedScores);
  auto cpu = estimateOpKernels(attention.forward(), kBatch, kSeq, CostTarget::Cpu);
  EXPECT_EQ(cpu[0].flops, 2 * 2 * 80 * kReachedScores);
}

} // namespace
