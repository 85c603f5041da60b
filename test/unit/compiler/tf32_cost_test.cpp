//===- tf32_cost_test.cpp - TF32 GEMMs in the device models and the roofline ===//
//
// The GPUs' dense TF32 tensor-core rates at the GEMM fraction, and an fp32 linear layer
// and tensor-core attention marked `tf32` (-bertc-lower-to-target with tf32) priced at
// them, against figures worked out by hand in the comments; where a GPU has no TF32 the
// mark costs what fp32 does.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/StepCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

namespace {

using bertc::DeviceModel;
using bertc::estimateKernelSeconds;
using bertc::estimateOpKernels;
using bertc::estimateOpSeconds;
using mlir::bert::ComputeUnit;
using mlir::bert::CostTarget;

TEST(Tf32Cost, TheGpusDenseTf32RatesAtTheGemmFraction) {
  // Datasheets, dense: A100 156 TFLOP/s, RTX 3090 35.6, RTX 4090 82.6, H100 SXM 494.7;
  // cuBLASLt's GEMMs reach 0.7 of them.
  const std::pair<const char *, double> rates[] = {
      {"sm_80", 109.2e12}, {"sm_86", 24.92e12}, {"sm_89", 57.82e12}, {"sm_90", 346.29e12}};
  for (auto [arch, rate] : rates) {
    const DeviceModel *gpu = bertc::gpuDeviceModel(arch);
    ASSERT_NE(gpu, nullptr) << arch;
    EXPECT_TRUE(gpu->hasTf32()) << arch;
    EXPECT_NEAR(gpu->tf32GemmFlopsPerSecond, rate, 1e-12 * rate) << arch;
    EXPECT_NEAR(gpu->flopsPerSecond(ComputeUnit::Tf32Gemm), rate, 1e-12 * rate) << arch;
  }
  // T4 (Turing) and the CPU have none: a TF32 GEMM there runs at the fp32 GEMM rate.
  const DeviceModel *t4 = bertc::gpuDeviceModel("sm_75");
  ASSERT_NE(t4, nullptr);
  EXPECT_FALSE(t4->hasTf32());
  EXPECT_DOUBLE_EQ(t4->flopsPerSecond(ComputeUnit::Tf32Gemm), 5.67e12);
  EXPECT_FALSE(bertc::cpuDeviceModel().hasTf32());
  EXPECT_DOUBLE_EQ(bertc::cpuDeviceModel().flopsPerSecond(ComputeUnit::Tf32Gemm), 100e9);
}

/// One fp32 BERT-base query projection, [32, 128, 768] x [768, 768]^T + [768], marked
/// `tf32` when asked.
class Projection {
public:
  explicit Projection(bool tf32) {
    context.loadDialect<mlir::bert::BertDialect, mlir::func::FuncDialect>();
    std::string mark = tf32 ? " {tf32}" : "";
    module = mlir::parseSourceString<mlir::ModuleOp>(
        "func.func @f(%x: tensor<?x?x768xf32>, %w: tensor<768x768xf32>, %b: tensor<768xf32>) {\n"
        "  %q = bert.linear %x, %w, %b" +
            mark +
            " : (tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> "
            "tensor<?x?x768xf32>\n  return\n}\n",
        &context);
    EXPECT_TRUE(module);
  }

  mlir::Operation *linear() {
    mlir::Operation *found = nullptr;
    module->walk([&](mlir::bert::LinearOp op) { found = op; });
    return found;
  }

private:
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

// flops: 2 * 4096 * 768 * 768 + 4096 * 768 (the bias) = 4,834,983,936;
// bytes: x and y 4096 * 768 * 4 each, W 768 * 768 * 4, b 768 * 4 = 27,528,192.
constexpr double kFlops = 4834983936.0, kBytes = 27528192.0;

TEST(Tf32Cost, AMarkedFp32GemmRunsAtTheTf32Rate) {
  Projection marked(/*tf32=*/true), plain(/*tf32=*/false);
  auto kernels = estimateOpKernels(marked.linear(), 32, 128, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].unit, ComputeUnit::Tf32Gemm);
  EXPECT_EQ(kernels[0].flops, kFlops);
  EXPECT_EQ(kernels[0].bytes, kBytes);

  const DeviceModel &a100 = *bertc::gpuDeviceModel("sm_80");
  // TF32: 4,834,983,936 / 109.2e12 = 44.276 us against 27,528,192 / 1244e9 = 22.129 us of
  // memory: compute-bound, 49.276 us with the launch.
  const double tf32 = 4.927640967032967e-05;
  EXPECT_NEAR(estimateOpSeconds(marked.linear(), 32, 128, a100), tf32, 1e-12 * tf32);
  // fp32 on CUDA cores: 4,834,983,936 / 13.65e12 + 5 us = 359.211 us, 7.3x as long.
  const double fp32 = 3.592112773626374e-04;
  EXPECT_NEAR(estimateOpSeconds(plain.linear(), 32, 128, a100), fp32, 1e-12 * fp32);

  // On a T4 the mark costs what fp32 does: 4,834,983,936 / 5.67e12 + 5 us = 857.731 us.
  const DeviceModel &t4 = *bertc::gpuDeviceModel("sm_75");
  const double t4Seconds = 8.577308529100529e-04;
  EXPECT_NEAR(estimateOpSeconds(marked.linear(), 32, 128, t4), t4Seconds, 1e-12 * t4Seconds);
}

/// fp32 BERT-base attention at seq 512 on tensor cores, 12 heads at a time, marked `tf32`
/// when asked: q [B, S, 768], 12 heads, no dropout.
class ChunkedAttention {
public:
  explicit ChunkedAttention(bool tf32) {
    context.loadDialect<mlir::bert::BertDialect, mlir::func::FuncDialect>();
    std::string mark = tf32 ? ", tf32" : "";
    module = mlir::parseSourceString<mlir::ModuleOp>(
        "func.func @f(%q: tensor<?x?x768xf32>, %mask: tensor<?x?xi32>) {\n"
        "  %ctx, %lse = bert.attention %q, %q, %q, %mask {heads = 12 : i64, dropout = 0.0 : "
        "f32, stream = 1 : i32, head_chunk = 12 : i64" +
            mark +
            "} : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<?x?x768xf32>, "
            "tensor<?x?xi32>) -> (tensor<?x?x768xf32>, tensor<?x12x?xf32>)\n  return\n}\n",
        &context);
    EXPECT_TRUE(module);
  }

  mlir::Operation *attention() {
    mlir::Operation *found = nullptr;
    module->walk([&](mlir::bert::AttentionOp op) { found = op; });
    return found;
  }

private:
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST(Tf32Cost, MarkedTensorCoreAttentionRunsItsGemmsAtTheTf32Rate) {
  ChunkedAttention marked(/*tf32=*/true), plain(/*tf32=*/false);
  auto kernels = estimateOpKernels(marked.attention(), 32, 512, CostTarget::Cuda);
  auto plainKernels = estimateOpKernels(plain.attention(), 32, 512, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 3u);
  ASSERT_EQ(plainKernels.size(), 3u);
  // QK^T and PV are GEMMs; the row kernel between them is not, marked or not.
  EXPECT_EQ(kernels[0].unit, ComputeUnit::Tf32Gemm);
  EXPECT_EQ(kernels[1].unit, ComputeUnit::Fp32Cores);
  EXPECT_EQ(kernels[2].unit, ComputeUnit::Tf32Gemm);
  EXPECT_EQ(plainKernels[0].unit, ComputeUnit::Fp32Gemm);
  EXPECT_EQ(plainKernels[2].unit, ComputeUnit::Fp32Gemm);

  // QK^T: 32 * 12 * 512^2 = 100,663,296 scores, 2 * 64 flops each: 12,884,901,888 flops;
  // it reads q and k (16,384 * 768 * 4 B each) and writes fp32 scores: 503,316,480 B.
  EXPECT_EQ(kernels[0].flops, 12884901888.0);
  EXPECT_EQ(kernels[0].bytes, 503316480.0);
  const DeviceModel &a100 = *bertc::gpuDeviceModel("sm_80");
  // TF32: 118.0 us of compute against 404.6 us of memory (1244 GB/s), with 2 launches (the
  // pointer arrays' fill and the GEMM over the chunk's 12 heads).
  const double tf32 = 503316480.0 / 1244e9 + 2 * 5e-6;
  EXPECT_NEAR(estimateKernelSeconds(kernels[0], a100), tf32, 1e-12 * tf32);
  // fp32 on CUDA cores: 12,884,901,888 / 13.65e12 = 943.9 us, compute-bound.
  const double fp32 = 12884901888.0 / 13.65e12 + 2 * 5e-6;
  EXPECT_NEAR(estimateKernelSeconds(plainKernels[0], a100), fp32, 1e-12 * fp32);
}

} // namespace
