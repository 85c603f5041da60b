//===- memory_bound_cost_test.cpp - own kernels by the bytes they move -----===//
//
// The memory-bound ops (LayerNorm, fused or into gradient slots, dropout, embeddings,
// AdamW) at BERT-base dimensions: what their CostOpInterface says the kernels compute and
// move, against counts worked out by hand in the comments. Every count is an integer below
// 2^53, so the comparisons are exact.
//
//===----------------------------------------------------------------------===//

#include "cost_test_ops.h"

namespace {

using bertc::estimateOpKernels;
using bertc::test::kBatch;
using bertc::test::Ops;
using mlir::bert::CostTarget;

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
  // The CUDA backward: the row kernel reads dy and x and writes dx (18,874,368 B), reads
  // gamma (1,536) and writes the statistics it recomputes (8 B a row: 32,768); the column
  // sums read dy, x and the statistics again (12,615,680) and write d gamma and d beta in
  // fp32 (6,144), in one launch: the 16 slices of 256 rows are added by the last block.
  auto grad = estimateOpKernels(ops.op("bert.layernorm_grad"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(grad.size(), 2u);
  EXPECT_EQ(grad[0].bytes, 18908672.0);
  EXPECT_EQ(grad[0].flops, 11 * 3145728.0);
  EXPECT_EQ(grad[0].launches, 1);
  EXPECT_EQ(grad[1].bytes, 12621824.0);
  EXPECT_EQ(grad[1].flops, 3 * 3145728.0);
  EXPECT_EQ(grad[1].launches, 1);
  // The CPU recomputes the statistics inside its one kernel, which reads dy, x and gamma
  // and writes dx, d gamma and d beta once.
  auto cpuGrad = estimateOpKernels(ops.op("bert.layernorm_grad"), kBatch, 128, CostTarget::Cpu);
  ASSERT_EQ(cpuGrad.size(), 1u);
  EXPECT_EQ(cpuGrad[0].bytes, 18882048.0);
  EXPECT_EQ(cpuGrad[0].launches, 1);
  EXPECT_EQ(cpuGrad[0].flops, grad[0].flops + grad[1].flops);
}

TEST(StepCost, TheFusedForwardAndTheAccumulatingBackwardMoveWhatTheyTouch) {
  Ops ops("%a: tensor<?x?x768xbf16>, %b: tensor<?x?x768xbf16>, %dy: tensor<?x?x768xbf16>", R"mlir(
  %g = bert.param "g" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<768xbf16>
  %c = bert.param "c" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<768xbf16>
  %s, %y = bert.add_layernorm %a, %b, %g, %c {epsilon = 9.99999996E-13 : f32}
      : (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<768xbf16>, tensor<768xbf16>)
      -> (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>)
  %dx = bert.accumulate_layernorm_grad %g, %c, %dy, %s {epsilon = 9.99999996E-13 : f32}
      : tensor<768xbf16>, tensor<768xbf16>, tensor<?x?x768xbf16>, tensor<?x?x768xbf16>
      -> tensor<?x?x768xbf16>
)mlir");
  // CUDA, seq 128, 3,145,728 elements of 2 bytes: one kernel reads a and b and writes the
  // sum and y (4 * 6,291,456 B), and reads gamma and beta (3,072); the add's flop and the
  // LayerNorm's 8 per element.
  auto fused = estimateOpKernels(ops.op("bert.add_layernorm"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(fused[0].bytes, 25168896.0);
  EXPECT_EQ(fused[0].flops, 9 * 3145728.0);
  // The CPU runs the add (a, b read, the sum written) and then the LayerNorm of the sum.
  auto cpu = estimateOpKernels(ops.op("bert.add_layernorm"), kBatch, 128, CostTarget::Cpu);
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_EQ(cpu[0].bytes, 18874368.0);
  EXPECT_EQ(cpu[0].flops, 3145728.0);
  EXPECT_EQ(cpu[1].bytes, 12585984.0);
  EXPECT_EQ(cpu[1].flops, 8 * 3145728.0);
  // The backward into the slots: the row kernel as layernorm_grad's (18,908,672 B), then
  // the column sums reading dy, x and the statistics (12,615,680) and both fp32 slots read
  // and written (4 * 3,072); beta is not read.
  auto grad =
      estimateOpKernels(ops.op("bert.accumulate_layernorm_grad"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(grad.size(), 2u);
  EXPECT_EQ(grad[0].bytes, 18908672.0);
  EXPECT_EQ(grad[1].bytes, 12627968.0);
}

// The dropout before the residual add folded in: the same bytes as the plain fused op (the
// dropout's output is never written), and per element the dropout's 26 flops (an eighth of
// a Philox call and a multiply) beside the add's one and the LayerNorm's 8.
TEST(StepCost, TheDropoutFoldedIntoTheFusedForwardAddsOnlyItsDraws) {
  Ops ops("%a: tensor<?x?x768xbf16>, %b: tensor<?x?x768xbf16>", R"mlir(
  %g = bert.param "g" {group = "embeddings", trainable = true, decay = false, init = "ones"} : tensor<768xbf16>
  %c = bert.param "c" {group = "embeddings", trainable = true, decay = false, init = "zeros"} : tensor<768xbf16>
  %s, %y = bert.add_layernorm %a, %b, %g, %c {epsilon = 9.99999996E-13 : f32, dropout = 0.1 : f32, stream = 2 : i32}
      : (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>, tensor<768xbf16>, tensor<768xbf16>)
      -> (tensor<?x?x768xbf16>, tensor<?x?x768xbf16>)
)mlir");
  auto fused = estimateOpKernels(ops.op("bert.add_layernorm"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(fused[0].bytes, 25168896.0);
  EXPECT_EQ(fused[0].flops, 35 * 3145728.0);
  EXPECT_EQ(fused[0].launches, 1);
  // The CPU's dropoutAdd reads a and b and writes the sum, then the LayerNorm.
  auto cpu = estimateOpKernels(ops.op("bert.add_layernorm"), kBatch, 128, CostTarget::Cpu);
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_EQ(cpu[0].bytes, 18874368.0);
  EXPECT_EQ(cpu[0].flops, 27 * 3145728.0);
  EXPECT_EQ(cpu[1].flops, 8 * 3145728.0);
}

TEST(StepCost, BiasGradientSumsTheColumnsIntoItsSlot) {
  Ops ops("%dy: tensor<?x?x3072xbf16>", R"mlir(
  %b = bert.param "b" {group = "encoder.layer.0", trainable = true, decay = false, init = "zeros"} : tensor<3072xbf16>
  bert.accumulate_bias_grad %b, %dy : tensor<3072xbf16>, tensor<?x?x3072xbf16>
)mlir");
  // Seq 128: dy read (4096 * 3072 * 2 = 25,165,824 B), the fp32 slot read and written
  // (2 * 4 * 3072 = 24,576), two flops a column, in one launch: on CUDA the last block of
  // each grid column adds the 16 row slices' sums, and the CPU sums in one loop.
  for (CostTarget target : {CostTarget::Cuda, CostTarget::Cpu}) {
    auto kernels = estimateOpKernels(ops.op("bert.accumulate_bias_grad"), kBatch, 128, target);
    ASSERT_EQ(kernels.size(), 1u);
    EXPECT_EQ(kernels[0].bytes, 25190400.0);
    EXPECT_EQ(kernels[0].flops, 2 * 3072.0);
    EXPECT_EQ(kernels[0].launches, 1);
  }
}

// A GELU or dropout backward fused with the bias gradient of what it writes: on CUDA one
// kernel that moves the backward's bytes and the bias's fp32 slot; on the CPU the backward,
// then the column sum reading d input again.
TEST(StepCost, BackwardsWithABiasGradientReadWhatTheyWriteOnlyOnTheCpu) {
  Ops ops("%dy: tensor<?x?x3072xbf16>, %x: tensor<?x?x3072xbf16>, %dd: tensor<?x?x768xbf16>",
          R"mlir(
  %b = bert.param "b" {group = "encoder.layer.0", trainable = true, decay = false, init = "zeros"} : tensor<3072xbf16>
  %dx = bert.gelu_grad_accumulate_bias %b, %dy, %x : tensor<3072xbf16>, tensor<?x?x3072xbf16>, tensor<?x?x3072xbf16> -> tensor<?x?x3072xbf16>
  %c = bert.param "c" {group = "encoder.layer.0", trainable = true, decay = false, init = "zeros"} : tensor<768xbf16>
  %ddx = bert.dropout_grad_accumulate_bias %c, %dd {rate = 1.000000e-01 : f32, stream = 3 : i32} : tensor<768xbf16>, tensor<?x?x768xbf16> -> tensor<?x?x768xbf16>
)mlir");
  // GELU at seq 128: 4096 * 3072 = 12,582,912 elements of 2 bytes, dy and x read and dx
  // written (75,497,472 B), 24 flops each; the slot read and written (2 * 4 * 3072 =
  // 24,576 B) and two flops a column (6,144).
  auto gelu =
      estimateOpKernels(ops.op("bert.gelu_grad_accumulate_bias"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(gelu.size(), 1u);
  EXPECT_EQ(gelu[0].bytes, 75522048.0);
  EXPECT_EQ(gelu[0].flops, 301996032.0);
  EXPECT_EQ(gelu[0].launches, 1);
  auto cpuGelu =
      estimateOpKernels(ops.op("bert.gelu_grad_accumulate_bias"), kBatch, 128, CostTarget::Cpu);
  ASSERT_EQ(cpuGelu.size(), 2u);
  EXPECT_EQ(cpuGelu[0].bytes, 75497472.0);
  EXPECT_EQ(cpuGelu[1].bytes, 25190400.0); // dx read again, and the slot
  EXPECT_EQ(cpuGelu[0].flops + cpuGelu[1].flops, gelu[0].flops);
  // Dropout: 4096 * 768 = 3,145,728 elements, dy read and dx written (12,582,912 B), 26
  // flops each (an eighth of a Philox call and a multiply); the slot 6,144 B and 1,536 flops.
  auto dropout =
      estimateOpKernels(ops.op("bert.dropout_grad_accumulate_bias"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(dropout.size(), 1u);
  EXPECT_EQ(dropout[0].bytes, 12589056.0);
  EXPECT_EQ(dropout[0].flops, 81790464.0);
  EXPECT_EQ(dropout[0].launches, 1);
  EXPECT_EQ(
      estimateOpKernels(ops.op("bert.dropout_grad_accumulate_bias"), kBatch, 128, CostTarget::Cpu)
          .size(),
      2u);
}

// The forms that write the bias gradient instead (an update in the backward reads it): the
// fp32 sum is written, not read and written (4 * 3072 = 12,288 B instead of 24,576).
TEST(StepCost, BackwardsWritingABiasGradientWriteItOnce) {
  Ops ops("%dy: tensor<?x?x3072xbf16>, %x: tensor<?x?x3072xbf16>", R"mlir(
  %dx, %db = bert.gelu_grad_bias %dy, %x : (tensor<?x?x3072xbf16>, tensor<?x?x3072xbf16>) -> (tensor<?x?x3072xbf16>, tensor<3072xf32>)
  %ddx, %ddb = bert.dropout_grad_bias %dy {rate = 1.000000e-01 : f32, stream = 3 : i32} : (tensor<?x?x3072xbf16>) -> (tensor<?x?x3072xbf16>, tensor<3072xf32>)
)mlir");
  auto gelu = estimateOpKernels(ops.op("bert.gelu_grad_bias"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(gelu.size(), 1u);
  EXPECT_EQ(gelu[0].bytes, 75497472.0 + 12288.0);
  EXPECT_EQ(gelu[0].flops, 301996032.0);
  // Dropout over 12,582,912 elements: dy read and dx written (50,331,648 B), 26 flops each.
  auto dropout = estimateOpKernels(ops.op("bert.dropout_grad_bias"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(dropout.size(), 1u);
  EXPECT_EQ(dropout[0].bytes, 50331648.0 + 12288.0);
  EXPECT_EQ(dropout[0].flops, 26 * 12582912.0 + 2 * 3072.0);
  auto cpu = estimateOpKernels(ops.op("bert.gelu_grad_bias"), kBatch, 128, CostTarget::Cpu);
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_EQ(cpu[1].bytes, 25165824.0 + 12288.0); // dx read again, the sum written
}

TEST(StepCost, DropoutPaysForItsMaskDraws) {
  Ops ops("%x: tensor<?x?x768xbf16>", R"mlir(
  %y = bert.dropout %x {rate = 1.000000e-01 : f32, stream = 3 : i32} : (tensor<?x?x768xbf16>) -> tensor<?x?x768xbf16>
)mlir");
  auto kernels = estimateOpKernels(ops.op("bert.dropout"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 1u);
  // An eighth of a 200-flop Philox call and a multiply per element; 2 bytes read and 2
  // written per element.
  EXPECT_EQ(kernels[0].flops, 26 * 3145728.0);
  EXPECT_EQ(kernels[0].bytes, 4 * 3145728.0);
}

TEST(StepCost, ConcatCopiesEachInputInALaunchOfItsOwn) {
  Ops ops("%a: tensor<?x768xbf16>, %b: tensor<?x768xbf16>, %c: tensor<?x64xbf16>", R"mlir(
  %j = bert.concat %a, %b, %c : (tensor<?x768xbf16>, tensor<?x768xbf16>, tensor<?x64xbf16>) -> tensor<?x1600xbf16>
)mlir");
  // 32 rows of 768, 768 and 64 bf16 (49,152, 49,152 and 4,096 B), each read and written.
  auto kernels = estimateOpKernels(ops.op("bert.concat"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].bytes, 2 * (49152.0 + 49152.0 + 4096.0));
  EXPECT_EQ(kernels[0].flops, 0.0);
  EXPECT_EQ(kernels[0].launches, 3);
}

TEST(StepCost, MaxPoolingComparesEachTokenOnce) {
  Ops ops("%h: tensor<?x?x768xbf16>, %mask: tensor<?x?xi32>", R"mlir(
  %p = bert.max_tokens %h, %mask : (tensor<?x?x768xbf16>, tensor<?x?xi32>) -> tensor<?x768xbf16>
)mlir");
  // 32 x 128 x 768 = 3,145,728 compares; the input (6,291,456 B), the mask (16,384) and the
  // result (49,152) moved once.
  auto kernels = estimateOpKernels(ops.op("bert.max_tokens"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].flops, 3145728.0);
  EXPECT_EQ(kernels[0].bytes, 6291456.0 + 16384.0 + 49152.0);
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
  // (6,291,456) and each row added into fp32 (2 * 4 * 3,145,728 = 25,165,824); on CUDA a
  // memset, then the kernel.
  auto grad = estimateOpKernels(ops.op("bert.embedding_grad"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(grad.size(), 1u);
  EXPECT_EQ(grad[0].bytes, 89075712.0 + 16384.0 + 6291456.0 + 25165824.0);
  EXPECT_EQ(grad[0].launches, 2);
  EXPECT_EQ(
      estimateOpKernels(ops.op("bert.embedding_grad"), kBatch, 128, CostTarget::Cpu)[0].launches,
      1);
}

TEST(StepCost, EmbeddingGradientIntoItsSlotMovesOnlyTheRowsTheTokensTouch) {
  Ops ops("%ids: tensor<?x?xi32>, %dy: tensor<?x?x768xbf16>", R"mlir(
  %t = bert.param "t" {group = "embeddings", trainable = true, decay = true, init = "normal"} : tensor<28996x768xbf16>
  bert.accumulate_embedding_grad %t, %dy, %ids : tensor<28996x768xbf16>, tensor<?x?x768xbf16>, tensor<?x?xi32>
)mlir");
  // The ids (16,384 B), dy (6,291,456) and each row added into the fp32 slot
  // (25,165,824), one flop an element, in one launch: no table-sized zeroing.
  for (CostTarget target : {CostTarget::Cuda, CostTarget::Cpu}) {
    auto kernels = estimateOpKernels(ops.op("bert.accumulate_embedding_grad"), kBatch, 128, target);
    ASSERT_EQ(kernels.size(), 1u);
    EXPECT_EQ(kernels[0].bytes, 16384.0 + 6291456.0 + 25165824.0);
    EXPECT_EQ(kernels[0].flops, 3145728.0);
    EXPECT_EQ(kernels[0].launches, 1);
  }
}

TEST(StepCost, AdamWRewritesTheWorkingCopyInItsPass) {
  Ops ops("", R"mlir(
  %w = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal"} : tensor<768x768xbf16>
  bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64, weight_decay = 0.01 : f64} : tensor<768x768xbf16>
)mlir");
  for (CostTarget target : {CostTarget::Cuda, CostTarget::Cpu}) {
    auto kernels = estimateOpKernels(ops.op("bert.adamw"), 0, 0, target);
    ASSERT_EQ(kernels.size(), 1u);
    // Seven fp32 accesses per element (589,824 of them) and the bf16 working copy written
    // in the same pass (2 B; the master is already in registers); a dozen flops and the
    // rounding.
    EXPECT_EQ(kernels[0].bytes, (28 + 2) * 589824.0);
    EXPECT_EQ(kernels[0].flops, 13 * 589824.0);
  }
  // On CUDA in the launch every parameter with fp32 moments shares; a call on the CPU.
  EXPECT_EQ(estimateOpKernels(ops.op("bert.adamw"), 0, 0, CostTarget::Cuda)[0].launches, 0);
  EXPECT_EQ(estimateOpKernels(ops.op("bert.adamw"), 0, 0, CostTarget::Cpu)[0].launches, 1);
}

TEST(StepCost, EightBitAdamWMovesBytesOfMomentsAndPaysForQuantizing) {
  Ops ops("", R"mlir(
  %w = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal"} : tensor<768x3072xbf16>
  bert.adamw %w {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64, weight_decay = 0.01 : f64, state_block = 2048} : tensor<768x3072xbf16>
)mlir");
  auto cuda = estimateOpKernels(ops.op("bert.adamw"), 0, 0, CostTarget::Cuda);
  ASSERT_EQ(cuda.size(), 1u);
  // 2,359,296 values in 1,152 blocks: the master read and written and the gradient read
  // (12 B), both moments' codes read and written (4 B), two absmaxes read and written per
  // block (16 B): 37,748,736 + 18,432 B, against the fp32 moments' 28 B per value; and the
  // bf16 working copy written in the same pass (2 B).
  EXPECT_EQ(cuda[0].bytes, (16 + 2) * 2359296.0 + 16 * 1152.0);
  // The update's 12 flops, 40 to dequantize, take the absmax and requantize, 1 to round.
  EXPECT_EQ(cuda[0].flops, 53 * 2359296.0);
  // Not in the chunk table's launch, but in a group launch shared with the other 8-bit
  // updates; a call of its own on the CPU.
  EXPECT_EQ(cuda[0].launches, 0);
  EXPECT_EQ(estimateOpKernels(ops.op("bert.adamw"), 0, 0, CostTarget::Cpu)[0].launches, 1);
}

TEST(StepCost, AnUpdateInTheBackwardIsALaunchOfItsOwn) {
  Ops ops("%dw: tensor<64x128xf32>", R"mlir(
  %w = bert.param "w" {group = "encoder.layer.0", trainable = true, decay = true, init = "normal"} : tensor<64x128xbf16>
  bert.adamw %w, %dw {beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-08 : f64, weight_decay = 0.01 : f64} : tensor<64x128xbf16>, tensor<64x128xf32>
)mlir");
  auto cuda = estimateOpKernels(ops.op("bert.adamw"), 0, 0, CostTarget::Cuda);
  ASSERT_EQ(cuda.size(), 1u);
  // The same update as after the backward: 8,192 values, seven fp32 accesses, a dozen
  // flops and the working copy's rounding and 2 B each.
  EXPECT_EQ(cuda[0].bytes, (28 + 2) * 8192.0);
  EXPECT_EQ(cuda[0].flops, 13 * 8192.0);
  // But in the backward there is no chunk table to share: a launch of its own, one for
  // the update and its working copy.
  EXPECT_EQ(cuda[0].launches, 1);
}

} // namespace
