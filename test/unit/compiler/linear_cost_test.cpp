//===- linear_cost_test.cpp - a linear layer with and without its bias -----===//
//
// A bias-less linear (torch.nn.Linear(bias=False), a decoder's projection) costs its GEMM
// alone: no bias add in the flops and no bias in the bytes, against counts worked out by
// hand in the comments. Every count is an integer below 2^53, so the comparisons are exact.
//
//===----------------------------------------------------------------------===//

#include "cost_test_ops.h"

namespace {

using bertc::estimateOpKernels;
using bertc::test::kBatch;
using bertc::test::Ops;
using mlir::bert::CostTarget;

TEST(LinearCost, ABiasLessLinearIsItsGemmAlone) {
  const std::string arguments =
      "%x: tensor<?x?x768xbf16>, %w: tensor<2048x768xbf16>, %b: tensor<2048xbf16>";
  Ops withBias(arguments, R"mlir(
  %y = bert.linear %x, %w, %b
      : (tensor<?x?x768xbf16>, tensor<2048x768xbf16>, tensor<2048xbf16>) -> tensor<?x?x2048xbf16>
)mlir");
  Ops withoutBias(arguments, R"mlir(
  %y = bert.linear %x, %w : (tensor<?x?x768xbf16>, tensor<2048x768xbf16>) -> tensor<?x?x2048xbf16>
)mlir");
  // 4096 rows at seq 128: the GEMM 2 * 4096 * 768 * 2048 = 12,884,901,888 flops, the bias
  // add 4096 * 2048 = 8,388,608 more. Bytes (bf16): x 4096 * 768 * 2 = 6,291,456, W
  // 2048 * 768 * 2 = 3,145,728, y 4096 * 2048 * 2 = 16,777,216: 26,214,400, and the bias
  // 2048 * 2 = 4,096 more.
  auto biased = estimateOpKernels(withBias.op("bert.linear"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(biased.size(), 1u);
  EXPECT_EQ(biased[0].flops, 12884901888.0 + 8388608.0);
  EXPECT_EQ(biased[0].bytes, 26214400.0 + 4096.0);
  auto plain = estimateOpKernels(withoutBias.op("bert.linear"), kBatch, 128, CostTarget::Cuda);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].flops, 12884901888.0);
  EXPECT_EQ(plain[0].bytes, 26214400.0);
}

} // namespace
