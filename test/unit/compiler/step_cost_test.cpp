//===- step_cost_test.cpp - op kernels and the roofline against hand counts ===//
//
// Each case parses a few bert ops at BERT-base dimensions (hidden H = 768, 12 heads of
// d = 64, intermediate I = 3072) and compares what their CostOpInterface says the kernels
// compute and move, and what the roofline makes of it, with counts worked out by hand in
// the comments. The comparisons are exact (every count is an integer below 2^53) or, for
// seconds, to a relative 1e-12.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/StepCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using bertc::DeviceModel;
using bertc::estimateKernelSeconds;
using bertc::estimateOpFlops;
using bertc::estimateOpKernels;
using bertc::estimateOpSeconds;
using mlir::bert::ComputeUnit;
using mlir::bert::CostTarget;
using mlir::bert::KernelWork;

constexpr int64_t kBatch = 32;

/// Parses `body` as the body of a function of `arguments` and keeps the module.
class Ops {
public:
  Ops(const std::string &arguments, const std::string &body) {
    context.loadDialect<mlir::bert::BertDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(
        "func.func @f(" + arguments + ") {\n" + body + "  return\n}\n", &context);
    if (!module)
      ADD_FAILURE() << "the ops do not parse:\n" << body;
  }

  /// The first op named `name`.
  mlir::Operation *op(llvm::StringRef name) {
    mlir::Operation *found = nullptr;
    walk([&](mlir::Operation *op) {
      if (!found && op->getName().getStringRef() == name)
        found = op;
    });
    EXPECT_NE(found, nullptr) << name.str();
    return found;
  }

  /// Flops of every op named `name` on `target`.
  double flopsOf(llvm::StringRef name, int64_t seq, CostTarget target) {
    double flops = 0;
    walk([&](mlir::Operation *op) {
      if (op->getName().getStringRef() == name)
        flops += estimateOpFlops(op, kBatch, seq, target);
    });
    return flops;
  }

private:
  void walk(llvm::function_ref<void(mlir::Operation *)> visit) {
    if (module)
      module->walk(visit);
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

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

// Self-attention over q, k, v [B, S, 768] in bf16 with 12 heads with `dropout`, and its
// gradient from the forward's output and lse.
const char *kAttentionArguments = "%q: tensor<?x?x768xbf16>, %mask: tensor<?x?xi32>";
std::string attention(const char *dropout) {
  return std::string(R"mlir(
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
}

// One product (QK^T or PV, every head) is 2 B heads S^2 d = 2 B S^2 H flops:
//   seq 128: 2 * 32 * 16,384 * 768 = 805,306,368
//   seq 512: 2 * 32 * 262,144 * 768 = 12,884,901,888
// and there are B heads S^2 scores: 6,291,456 at seq 128, 100,663,296 at seq 512.
constexpr double kProduct128 = 805306368, kProduct512 = 12884901888;
constexpr double kScores128 = 6291456, kScores512 = 100663296;

TEST(StepCost, CudaAttentionForwardIsTwoProductsOnCudaCores) {
  Ops ops(kAttentionArguments, attention("0.0"));
  auto kernels = estimateOpKernels(ops.op("bert.attention"), kBatch, 512, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 1u);
  // fp32 multiply-adds on CUDA cores although the operands are bf16.
  EXPECT_EQ(kernels[0].unit, ComputeUnit::Fp32Cores);
  // QK^T and PV, and 8 flops per score for the online softmax.
  EXPECT_EQ(kernels[0].flops, 2 * kProduct512 + 8 * kScores512);
  // q, k, v read and ctx written (16384 * 768 * 2 = 25,165,824 B each), the mask
  // (16384 * 4 = 65,536) and the fp32 lse per query row (32 * 12 * 512 * 4 = 786,432):
  // 100,663,296 + 65,536 + 786,432.
  EXPECT_EQ(kernels[0].bytes, 101515264.0);
}

TEST(StepCost, CudaAttentionBackwardStartsFromTheSavedLse) {
  Ops ops(kAttentionArguments, attention("0.0"));
  mlir::Operation *grad = ops.op("bert.attention_grad");
  auto kernels = estimateOpKernels(grad, kBatch, 128, CostTarget::Cuda);
  // The row term dctx . ctx, the key/value and the query kernels; no forward again.
  ASSERT_EQ(kernels.size(), 3u);
  for (const KernelWork &kernel : kernels)
    EXPECT_EQ(kernel.unit, ComputeUnit::Fp32Cores);
  // The row term: a dot of d = 64 per (row, head), 2 B S H = 2 * 4096 * 768 = 6,291,456;
  // it reads dctx and ctx (2 * 6,291,456 B) and writes 32 * 12 * 128 * 4 = 196,608 B.
  EXPECT_EQ(kernels[0].flops, 6291456.0);
  EXPECT_EQ(kernels[0].bytes, 12779520.0);
  // Products: 4 (QK^T, dV, dP, dK) + 3 (QK^T, dP, dQ) = 7. Both kernels recompute
  // probabilities from the lse (7) and score gradients (4) per score.
  EXPECT_EQ(kernels[1].flops, 4 * kProduct128 + 11 * kScores128);
  EXPECT_EQ(kernels[2].flops, 3 * kProduct128 + 11 * kScores128);
  // Each reads dctx, q, k, v (4 * 6,291,456), the mask (16,384), the lse and the row term
  // (2 * 196,608): 25,575,424; the first writes dk and dv, the second dq.
  EXPECT_EQ(kernels[1].bytes, 25575424.0 + 2 * 6291456.0);
  EXPECT_EQ(kernels[2].bytes, 25575424.0 + 6291456.0);
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

TEST(StepCost, AttentionDropoutDrawsItsMaskInEveryKernel) {
  // A decision counts 50 flops (a 200-flop Philox call decides four scores); the CUDA
  // forward draws once per score and the backward twice (both gradient kernels), the CPU
  // once each.
  auto extra = [&](llvm::StringRef name, CostTarget target) {
    Ops with(kAttentionArguments, attention("1.000000e-01"));
    Ops without(kAttentionArguments, attention("0.0"));
    return with.flopsOf(name, 128, target) - without.flopsOf(name, 128, target);
  };
  EXPECT_EQ(extra("bert.attention", CostTarget::Cuda), 50 * kScores128);
  EXPECT_EQ(extra("bert.attention_grad", CostTarget::Cuda), 2 * 50 * kScores128);
  EXPECT_EQ(extra("bert.attention", CostTarget::Cpu), 50 * kScores128);
  EXPECT_EQ(extra("bert.attention_grad", CostTarget::Cpu), 50 * kScores128);
}

//===----------------------------------------------------------------------===//
// Memory-bound kernels: bytes at their element sizes
//===----------------------------------------------------------------------===//

TEST(StepCost, LayerNormMovesItsRowsOnce) {
  Ops ops("%x: tensor<?x?x768xbf16>, %g: tensor<768xbf16>, %dy: tensor<?x?x768xbf16>", R"mlir(
  %y = bert.layernorm %x, %g, %g {epsilon = 9.99999996E-13 : f32}
      : (tensor<?x?x768xbf16>, tensor<768xbf16>, tensor<768xbf16>) -> tensor<?x?x768xbf16>
  %dx, %dg, %db = bert.layernorm_grad %dy, %x, %g {epsilon = 9.99999996E-13 : f32}
      : (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<768xbf16>)
      -> (tensor<?x?x768xbf16>, tensor<768xf32>, tensor<768xf32>)
)mlir");
  // Forward at seq 128: x read and y written, 4096 * 768 = 3,145,728 elements of 2 bytes
  // each, and gamma and beta (768 * 2 each): 12,582,912 + 3,072.
  auto forward = estimateOpKernels(ops.op("bert.layernorm"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].bytes, 12585984.0);
  EXPECT_EQ(forward[0].flops, 8 * 3145728.0);
  // The CUDA backward: a statistics pass over x (6,291,456 B), then dy and x read, dx
  // written (18,874,368), gamma read (1,536), d gamma and d beta written in fp32 (6,144).
  auto grad = estimateOpKernels(ops.op("bert.layernorm_grad"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(grad.size(), 2u);
  EXPECT_EQ(grad[0].bytes, 6291456.0);
  EXPECT_EQ(grad[1].bytes, 18882048.0);
  // The CPU recomputes the statistics inside its one kernel.
  auto cpuGrad = estimateOpKernels(ops.op("bert.layernorm_grad"), kBatch, 128, CostTarget::Cpu);
  ASSERT_EQ(cpuGrad.size(), 1u);
  EXPECT_EQ(cpuGrad[0].bytes, 18882048.0);
  EXPECT_EQ(cpuGrad[0].flops, grad[0].flops + grad[1].flops);
}

TEST(StepCost, DropoutPaysForItsMaskDraws) {
  Ops ops("%x: tensor<?x?x768xbf16>", R"mlir(
  %y = bert.dropout %x {rate = 1.000000e-01 : f32, stream = 3 : i32} : (tensor<?x?x768xbf16>) -> tensor<?x?x768xbf16>
)mlir");
  auto kernels = estimateOpKernels(ops.op("bert.dropout"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 1u);
  // A quarter of a 200-flop Philox call and a multiply per element; 2 bytes read and 2
  // written per element.
  EXPECT_EQ(kernels[0].flops, 51 * 3145728.0);
  EXPECT_EQ(kernels[0].bytes, 4 * 3145728.0);
}

TEST(StepCost, EmbeddingReadsOnlyTheRowsItLooksUp) {
  Ops ops("%ids: tensor<?x?xi32>, %table: tensor<28996x768xbf16>, %dy: tensor<?x?x768xbf16>",
          R"mlir(
  %e = bert.embedding %ids, %table : (tensor<?x?xi32>, tensor<28996x768xbf16>) -> tensor<?x?x768xbf16>
  %dt = bert.embedding_grad %dy, %ids : (tensor<?x?x768xbf16>, tensor<?x?xi32>) -> tensor<28996x768xf32>
)mlir");
  // 4096 ids (16,384 B), 4096 rows of 768 bf16 read and written: 16,384 + 2 * 6,291,456.
  auto forward = estimateOpKernels(ops.op("bert.embedding"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].bytes, 12599296.0);
  // The fp32 table gradient zeroed (28996 * 768 * 4 = 89,075,712 B), the ids, dy
  // (6,291,456) and each row added into fp32 (2 * 4 * 3,145,728 = 25,165,824).
  auto grad = estimateOpKernels(ops.op("bert.embedding_grad"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(grad.size(), 1u);
  EXPECT_EQ(grad[0].bytes, 89075712.0 + 16384.0 + 6291456.0 + 25165824.0);
}

TEST(StepCost, AdamWUpdatesThenRewritesTheWorkingCopy) {
  Ops ops("", R"mlir(
  %w = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal"} : tensor<768x768xbf16>
  bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64, weight_decay = 0.01 : f64} : tensor<768x768xbf16>
)mlir");
  auto cuda = estimateOpKernels(ops.op("bert.adamw"), 0, 0, CostTarget::Cuda);
  ASSERT_EQ(cuda.size(), 2u);
  // Seven fp32 accesses per element (589,824 of them), in the CUDA target's shared launch.
  EXPECT_EQ(cuda[0].bytes, 28 * 589824.0);
  EXPECT_EQ(cuda[0].launches, 0);
  // The bf16 working copy from the fp32 master: 4 bytes read, 2 written per element, in
  // the CUDA target's one convertMasters launch.
  EXPECT_EQ(cuda[1].bytes, 6 * 589824.0);
  EXPECT_EQ(cuda[1].launches, 0);
  auto cpu = estimateOpKernels(ops.op("bert.adamw"), 0, 0, CostTarget::Cpu);
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_EQ(cpu[0].launches, 1);
  EXPECT_EQ(cpu[1].launches, 1);
}

TEST(StepCost, EightBitAdamWMovesBytesOfMomentsAndPaysForQuantizing) {
  Ops ops("", R"mlir(
  %w = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal"} : tensor<768x3072xbf16>
  bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64, weight_decay = 0.01 : f64, state_block = 2048} : tensor<768x3072xbf16>
)mlir");
  auto cuda = estimateOpKernels(ops.op("bert.adamw"), 0, 0, CostTarget::Cuda);
  ASSERT_EQ(cuda.size(), 2u);
  // 2,359,296 values in 1,152 blocks: the master read and written and the gradient read
  // (12 B), both moments' codes read and written (4 B), two absmaxes read and written per
  // block (16 B): 37,748,736 + 18,432 B, against the fp32 moments' 28 B per value.
  EXPECT_EQ(cuda[0].bytes, 16 * 2359296.0 + 16 * 1152.0);
  // The update's 12 flops and 40 to dequantize, take the absmax and requantize.
  EXPECT_EQ(cuda[0].flops, 52 * 2359296.0);
  // Updated on its own, not in the chunk table's launch; so is its working copy.
  EXPECT_EQ(cuda[0].launches, 1);
  EXPECT_EQ(cuda[1].bytes, 6 * 2359296.0);
  EXPECT_EQ(cuda[1].launches, 1);
}

TEST(StepCost, AnUpdateInTheBackwardIsALaunchOfItsOwn) {
  Ops ops("%dw: tensor<64x128xf32>", R"mlir(
  %w = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal"} : tensor<64x128xbf16>
  bert.adamw %w, %dw {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64, weight_decay = 0.01 : f64} : tensor<64x128xbf16>, tensor<64x128xf32>
)mlir");
  auto cuda = estimateOpKernels(ops.op("bert.adamw"), 0, 0, CostTarget::Cuda);
  ASSERT_EQ(cuda.size(), 2u);
  // The same update as after the backward: 8,192 values, seven fp32 accesses and a dozen
  // flops each; the working copy from the master, 4 B read and 2 B written.
  EXPECT_EQ(cuda[0].bytes, 28 * 8192.0);
  EXPECT_EQ(cuda[0].flops, 12 * 8192.0);
  EXPECT_EQ(cuda[1].bytes, 6 * 8192.0);
  // But in the backward there is no chunk table to share: both are launches of their own.
  EXPECT_EQ(cuda[0].launches, 1);
  EXPECT_EQ(cuda[1].launches, 1);
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

TEST(StepCost, BackwardAttentionOnAnA100IsPricedAtTheFp32CoreRate) {
  Ops ops(kAttentionArguments, attention("0.0"));
  const DeviceModel &a100 = *bertc::gpuDeviceModel("sm_80");
  // At seq 512 both gradient kernels are compute-bound at 9.75e12 flop/s; the row term
  // (2 B S H flops, dctx and ctx read and one fp32 per row written) is memory-bound.
  //   kv grads: 4 P + 11 S     = 51,539,607,552 + 1,107,296,256
  //   q grads:  3 P + 11 S     = 38,654,705,664 + 1,107,296,256
  //   row term: (2 * 25,165,824 + 786,432) B / 1.244e12 B/s
  double computeFlops = 7 * kProduct512 + 22 * kScores512;
  double rowTermBytes = 2 * 25165824.0 + 786432.0;
  double expected = computeFlops / 9.75e12 + rowTermBytes / 1244e9 + 3 * 5e-6;
  EXPECT_NEAR(estimateOpSeconds(ops.op("bert.attention_grad"), kBatch, 512, a100), expected,
              1e-12 * expected);
  // About 9.5 ms; the same products on bf16 tensor cores would take about half of one.
  EXPECT_GT(expected, 0.0095);
}

} // namespace
