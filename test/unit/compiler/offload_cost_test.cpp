//===- offload_cost_test.cpp - the step estimate around the micro-step's ops ===//
//
// A module whose optimizer runs on the host (bert.optimizer_on_host) is priced with the
// CPU trainer's AdamW on the CPU model and the PCIe transfers at the GPU's link, against
// figures worked out by hand in the comments; on the CPU target nothing moves, so the
// estimate is the one without offload. A planned module's gradient region is zeroed once
// a step. The breakdown by op adds up to the estimate.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/StepCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using bertc::estimateStepCost;

/// A frozen [1000, 768] and a trainable [768, 768] bf16 parameter. The micro-step computes
/// nothing but, with `backward`, a loss and then a GELU over a frozen [4096, 4096] fp32
/// tensor: its backward, as far as the step estimate can tell.
std::string module(bool onHost, bool backward = false, float maxGradNorm = 0) {
  std::string train =
      "#bert.train<batch = 4, epochs = 1, steps = 0, lr = 1.0e-03, weight_decay = 0.01, "
      "beta1 = 0.9, beta2 = 0.999, adam_eps = 1.0e-08, schedule = \"constant\", warmup = 0.0, "
      "seed = 42, shuffle = false, num_labels = 2, initializer_range = 0.02, vocab = 16, "
      "type_vocab = 2, task = \"classification\", max_grad_norm = " +
      std::to_string(maxGradNorm) + ">";
  std::string loss = backward ? R"mlir(
    %labels = bert.input "labels" : tensor<?xi32>
    %logits = bert.param "logits" {group = "head", trainable = false, decay = true, init = "normal"} : tensor<4x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<4x2xf32>, tensor<?xi32>) -> tensor<f32>
    %h = bert.param "h" {group = "head", trainable = false, decay = true, init = "normal"} : tensor<4096x4096xf32>
    %g = bert.gelu %h : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
)mlir"
                              : "";
  return "module attributes {bert.max_batch = 4 : i64, bert.max_seq = 8 : i64, bert.train = " +
         train + (onHost ? ", bert.optimizer_on_host" : "") + R"mlir(} {
  func.func @micro_step())mlir" +
         std::string(backward ? " -> tensor<f32>" : "") + R"mlir( {
    %t = bert.param "t" {group = "embeddings", trainable = false, decay = true, init = "normal"} : tensor<1000x768xbf16>
    %w = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal"} : tensor<768x768xbf16>)mlir" +
         loss + (backward ? "    return %loss : tensor<f32>" : "    return") + R"mlir(
  }
  func.func @optimizer_step() {
    %w = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal"} : tensor<768x768xbf16>
    bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64, weight_decay = 0.01 : f64} : tensor<768x768xbf16>
    return
  }
}
)mlir";
}

/// The breakdown's entry for `op`; fails the test and returns an empty one without it.
bertc::OpTime entry(const bertc::StepCost &cost, const std::string &op) {
  for (const bertc::OpTime &time : cost.byOp)
    if (time.op == op)
      return time;
  ADD_FAILURE() << "no entry for " << op;
  return {};
}

/// Checks that the breakdown is longest first and adds up to the step's seconds and flops.
void expectBreakdownAddsUp(const bertc::StepCost &cost) {
  double seconds = 0, flops = 0;
  for (size_t i = 0; i < cost.byOp.size(); ++i) {
    seconds += cost.byOp[i].seconds;
    flops += cost.byOp[i].flops;
    if (i > 0) {
      EXPECT_GE(cost.byOp[i - 1].seconds, cost.byOp[i].seconds) << cost.byOp[i].op;
    }
  }
  EXPECT_NEAR(seconds, cost.seconds, 1e-12 * cost.seconds);
  EXPECT_EQ(flops, cost.flops);
}

class OffloadCost : public ::testing::Test {
protected:
  OffloadCost() { context.loadDialect<mlir::bert::BertDialect, mlir::func::FuncDialect>(); }

  bertc::StepCost cost(const std::string &text, const bertc::DeviceModel &device) {
    mlir::OwningOpRef<mlir::ModuleOp> parsed =
        mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(parsed);
    return parsed ? estimateStepCost(*parsed, device) : bertc::StepCost{};
  }
  bertc::StepCost cost(bool onHost, const bertc::DeviceModel &device) {
    return cost(module(onHost), device);
  }

  mlir::MLIRContext context;
};

TEST_F(OffloadCost, TheHostsAdamWAndThePcieTransfersOfTheTrainableParameters) {
  const bertc::DeviceModel *t4 = bertc::gpuDeviceModel("sm_75");
  ASSERT_NE(t4, nullptr);
  // PCIe 3.0 x16, 15.75 GB/s, at 0.8: 12.6 GB/s each way.
  EXPECT_NEAR(t4->pcieBytesPerSecond, 12.6e9, 1e-3);
  // On the device: 589,824 values, 28 B each at 256 GB/s (0.8 of 320) = 64.512 us, and the
  // working copy written in the same pass, 2 B each = 4.608 us, in a shared launch.
  bertc::StepCost device = cost(false, *t4);
  EXPECT_NEAR(device.seconds, 69.12e-6, 1e-15);
  EXPECT_EQ(device.hostSeconds, 0);
  // On the host (the CPU model: 10 GB/s, 12 GFLOP/s, 1 us a call): the update, with the
  // working copy written in the same pass, moves 17,694,720 B = 1769.472 us (its 7,667,712
  // flops take 638.976 us) + 1 us. Over PCIe: the gradient down (4 B) and the bf16
  // parameter up (2 B) of the trainable parameter alone: 3,538,944 B at 12.6 GB/s =
  // 280.868571... us. The frozen [1000, 768] parameter moves nothing.
  bertc::StepCost offloaded = cost(true, *t4);
  double expected = 1770.472e-6 + 3538944.0 / 12.6e9;
  EXPECT_NEAR(offloaded.hostSeconds, expected, 1e-12 * expected);
  EXPECT_NEAR(offloaded.seconds, expected, 1e-12 * expected);
  EXPECT_EQ(offloaded.flops, device.flops);
}

TEST_F(OffloadCost, StreamedGradientsHideTheHostsWorkBehindTheBackward) {
  const bertc::DeviceModel *t4 = bertc::gpuDeviceModel("sm_75");
  ASSERT_NE(t4, nullptr);
  // The backward after the loss: a GELU reading and writing 4096 x 4096 fp32 values,
  // 134,217,728 B at 256 GB/s = 524.288 us (plus 5 us for its launch).
  double window = 134217728.0 / 256e9 + 5e-6;
  // The host's work before the uploads: the update with its working copy (1770.472 us)
  // and the gradient down (2,359,296 B at 12.6 GB/s); the upload (1,179,648 B) after.
  double hostWork = 1770.472e-6 + 2359296.0 / 12.6e9;
  double up = 1179648.0 / 12.6e9;
  bertc::StepCost onDevice = cost(module(false, true), *t4);
  bertc::StepCost streamed = cost(module(true, true), *t4);
  EXPECT_NEAR(streamed.hostSeconds, hostWork + up, 1e-12 * (hostWork + up));
  // The device's step less its own AdamW (69.12 us on the T4, as above) is the loss and
  // the GELU; the streamed step adds what of the host's work outlasts the GELU.
  double deviceStep = onDevice.seconds - 69.12e-6;
  EXPECT_NEAR(streamed.seconds, deviceStep + up + (hostWork - window), 1e-12);
  // With clipping, every update waits for the global norm: nothing streams, the step
  // waits for all of it.
  bertc::StepCost clipped = cost(module(true, true, 1.0f), *t4);
  EXPECT_NEAR(clipped.seconds, deviceStep + up + hostWork, 1e-12);
  // The breakdown: what the step waits for of the host's work (1.52 ms), the GELU's
  // backward, the loss; no bert.adamw, which runs on the host.
  ASSERT_EQ(streamed.byOp.size(), 3u);
  EXPECT_EQ(streamed.byOp[0].op, bertc::kHostOptimizer);
  EXPECT_NEAR(streamed.byOp[0].seconds, up + hostWork - window, 1e-12);
  EXPECT_EQ(streamed.byOp[0].launches, 0);
  EXPECT_EQ(streamed.byOp[1].op, "bert.gelu");
  EXPECT_NEAR(streamed.byOp[1].seconds, window, 1e-15);
  EXPECT_EQ(streamed.byOp[1].launches, 1);
  EXPECT_EQ(entry(streamed, "bert.cross_entropy").runs, 1);
  expectBreakdownAddsUp(streamed);
  expectBreakdownAddsUp(clipped);
  EXPECT_NEAR(entry(clipped, bertc::kHostOptimizer).seconds, up + hostWork, 1e-12);
}

TEST_F(OffloadCost, TheGradientRegionIsZeroedOnceAStep) {
  const bertc::DeviceModel *t4 = bertc::gpuDeviceModel("sm_75");
  ASSERT_NE(t4, nullptr);
  auto planned = [&](const char *gradients) {
    std::string text = module(false);
    std::string bounds = "bert.max_seq = 8 : i64";
    text.insert(text.find(bounds) + bounds.size(),
                std::string(", bert.plan = #bert.plan<arena_bytes = 4000000, parameters = [0, "
                            "1000], master_weights = [0, 0], gradients = ") +
                    gradients +
                    ", optimizer_state = [0, 0], scratch = [0, 0], inputs = [0, 0], "
                    "activations = [0, 0], gemm_workspace = [0, 0], lower_bound_bytes = "
                    "4000000, loss = 0>");
    return text;
  };
  // 2,359,296 B (the trainable [768, 768]'s fp32 gradient) at 256 GB/s = 9.216 us, plus
  // 5 us for the memset's launch, beside the 69.12 us of AdamW.
  bertc::StepCost zeroed = cost(planned("[4096, 2359296]"), *t4);
  EXPECT_NEAR(zeroed.seconds, 69.12e-6 + 9.216e-6 + 5e-6, 1e-15);
  // Each its own entry: AdamW (in the shared launch, so no launch of its own) first.
  ASSERT_EQ(zeroed.byOp.size(), 2u);
  EXPECT_EQ(zeroed.byOp[0].op, "bert.adamw");
  EXPECT_NEAR(zeroed.byOp[0].seconds, 69.12e-6, 1e-15);
  EXPECT_EQ(zeroed.byOp[0].runs, 1);
  EXPECT_EQ(zeroed.byOp[0].launches, 0);
  EXPECT_EQ(zeroed.byOp[1].op, bertc::kTimedGradientZeroing);
  EXPECT_NEAR(zeroed.byOp[1].seconds, 9.216e-6 + 5e-6, 1e-15);
  EXPECT_EQ(zeroed.byOp[1].launches, 1);
  expectBreakdownAddsUp(zeroed);
  // Every update in the backward: no region, nothing to zero.
  bertc::StepCost inBackward = cost(planned("[4096, 0]"), *t4);
  EXPECT_NEAR(inBackward.seconds, 69.12e-6, 1e-15);
  ASSERT_EQ(inBackward.byOp.size(), 1u);
  EXPECT_EQ(inBackward.byOp[0].op, "bert.adamw");
}

TEST_F(OffloadCost, OnTheCpuNothingMoves) {
  const bertc::DeviceModel &cpu = bertc::cpuDeviceModel();
  EXPECT_EQ(cpu.pcieBytesPerSecond, 0);
  bertc::StepCost device = cost(false, cpu), offloaded = cost(true, cpu);
  EXPECT_EQ(offloaded.seconds, device.seconds);
  EXPECT_EQ(offloaded.hostSeconds, 0);
  EXPECT_NEAR(device.seconds, 1770.472e-6, 1e-15);
}

} // namespace
