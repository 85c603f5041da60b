// The heads' and losses' launchers (the loss seed, the cross-entropy gradient alone, the
// regression loss, token selection, mean and max pooling, flattening, slices and
// concatenations, transposition)
// against their references: the CPU twins, or the fused kernels they split.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

#include <limits>

namespace bertc::cuda::test {
namespace {

template <typename T> class ExtraKernelsTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(ExtraKernelsTest, StorageTypes, StorageTypeNames);

class FillAndLossTest : public CudaTest {};

/// The pooling tests' attention mask: four rows of `seq` (9) tokens, 9, 5, 1 and 0 of them real.
std::vector<int32_t> poolingMask(int64_t seq) {
  const int64_t real[] = {9, 5, 1, 0};
  std::vector<int32_t> mask(4 * seq);
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t s = 0; s < seq; ++s)
      mask[b * seq + s] = s < real[b];
  return mask;
}

// Selecting a token and its gradient move values only: bit-identical to the CPU.
TYPED_TEST(ExtraKernelsTest, SelectTokenMatchesCpu) {
  using T = TypeParam;
  const int64_t batch = 5, seq = 7, hidden = 33, index = 2;
  const auto x = randomValues<T>(batch * seq * hidden, 4);
  const auto dout = randomValues<T>(batch * hidden, 5);
  std::vector<T> out(batch * hidden), dx(batch * seq * hidden);
  cpu::selectTokenForward(x.data(), out.data(), batch, seq, hidden, index);
  cpu::selectTokenBackward(dout.data(), dx.data(), batch, seq, hidden, index);
  DeviceArray<T> dX(x), dOut(batch * hidden), dDout(dout), dDx(batch * seq * hidden);
  cuda::selectTokenForward(dX.get(), dOut.get(), batch, seq, hidden, index, nullptr);
  cuda::selectTokenBackward(dDout.get(), dDx.get(), batch, seq, hidden, index, nullptr);
  expectBitIdentical(dOut.download(), out, "out");
  expectBitIdentical(dDx.download(), dx, "dx");
}

// Mean pooling sums each value's tokens in the CPU's order: bit-identical to it.
TYPED_TEST(ExtraKernelsTest, MeanTokensMatchesCpu) {
  using T = TypeParam;
  const int64_t batch = 4, seq = 9, hidden = 33;
  const auto x = randomValues<T>(batch * seq * hidden, 9);
  const auto dy = randomValues<T>(batch * hidden, 10);
  const std::vector<int32_t> mask = poolingMask(seq);
  std::vector<T> out(batch * hidden), dx(batch * seq * hidden);
  cpu::meanTokensForward(x.data(), mask.data(), out.data(), batch, seq, hidden);
  cpu::meanTokensBackward(dy.data(), mask.data(), dx.data(), batch, seq, hidden);
  DeviceArray<T> dX(x), dOut(out.size()), dDy(dy), dDx(dx.size());
  DeviceArray<int32_t> dMask(mask);
  cuda::meanTokensForward(dX.get(), dMask.get(), dOut.get(), batch, seq, hidden, nullptr);
  cuda::meanTokensBackward(dDy.get(), dMask.get(), dDx.get(), batch, seq, hidden, nullptr);
  expectBitIdentical(dOut.download(), out, "out");
  expectBitIdentical(dDx.download(), dx, "dx");
}

// Max pooling compares each value's tokens in the CPU's order (the first of equal maxima
// wins): bit-identical to it, with ties, NaNs and a row without real tokens.
TYPED_TEST(ExtraKernelsTest, MaxTokensMatchesCpu) {
  using T = TypeParam;
  const int64_t batch = 4, seq = 9, hidden = 33;
  auto x = randomValues<T>(batch * seq * hidden, 11);
  const auto dy = randomValues<T>(batch * hidden, 12);
  // A tie at the maximum (the values lie in [-1, 1)): the gradient goes to token 4.
  x[(0 * seq + 4) * hidden + 3] = x[(0 * seq + 6) * hidden + 3] = fromFloat<T>(2.0f);
  x[(1 * seq + 2) * hidden + 5] = fromFloat<T>(std::numeric_limits<float>::quiet_NaN());
  const std::vector<int32_t> mask = poolingMask(seq);
  std::vector<T> out(batch * hidden), dx(batch * seq * hidden);
  cpu::maxTokensForward(x.data(), mask.data(), out.data(), batch, seq, hidden);
  cpu::maxTokensBackward(dy.data(), x.data(), mask.data(), dx.data(), batch, seq, hidden);
  DeviceArray<T> dX(x), dOut(out.size()), dDy(dy), dDx(dx.size());
  DeviceArray<int32_t> dMask(mask);
  cuda::maxTokensForward(dX.get(), dMask.get(), dOut.get(), batch, seq, hidden, nullptr);
  cuda::maxTokensBackward(dDy.get(), dX.get(), dMask.get(), dDx.get(), batch, seq, hidden, nullptr);
  expectBitIdentical(dOut.download(), out, "out");
  expectBitIdentical(dDx.download(), dx, "dx");
  EXPECT_EQ(toFloat(dx[(0 * seq + 4) * hidden + 3]), toFloat(dy[3]));
  EXPECT_EQ(toFloat(dx[(0 * seq + 6) * hidden + 3]), 0.0f);
  EXPECT_EQ(toFloat(dx[(1 * seq + 2) * hidden + 5]), toFloat(dy[hidden + 5])) << "the NaN's token";
}

// Slices and concatenations move values only: bit-identical to the CPU, over rows of
// [batch, seq, features] (batch * seq of them).
TYPED_TEST(ExtraKernelsTest, ColumnsMatchCpu) {
  using T = TypeParam;
  const int64_t rows = 3 * 5, width = 37, start = 9, kept = 20;
  const auto x = randomValues<T>(rows * width, 13);
  const auto part = randomValues<T>(rows * kept, 14);
  std::vector<T> sliced(rows * kept), placed = randomValues<T>(rows * width, 15);
  std::vector<T> padded(rows * width);
  DeviceArray<T> dX(x), dPart(part), dSliced(sliced.size()), dPlaced(placed),
      dPadded(padded.size());
  cpu::sliceColumns(x.data(), sliced.data(), rows, width, start, kept);
  cpu::placeColumns(part.data(), placed.data(), rows, kept, width, start);
  cpu::padColumns(part.data(), padded.data(), rows, kept, width, start);
  cuda::sliceColumns(dX.get(), dSliced.get(), rows, width, start, kept, nullptr);
  cuda::placeColumns(dPart.get(), dPlaced.get(), rows, kept, width, start, nullptr);
  cuda::padColumns(dPart.get(), dPadded.get(), rows, kept, width, start, nullptr);
  expectBitIdentical(dSliced.download(), sliced, "sliced");
  expectBitIdentical(dPlaced.download(), placed, "placed");
  expectBitIdentical(dPadded.download(), padded, "padded");
}

// Flattening moves values only: bit-identical to the CPU, the padding zero.
TYPED_TEST(ExtraKernelsTest, FlattenMatchesCpu) {
  using T = TypeParam;
  const int64_t batch = 3, seq = 5, paddedSeq = 8, hidden = 7;
  const auto x = randomValues<T>(batch * seq * hidden, 7);
  const auto dy = randomValues<T>(batch * paddedSeq * hidden, 8);
  std::vector<T> out(batch * paddedSeq * hidden), dx(batch * seq * hidden);
  cpu::flattenForward(x.data(), out.data(), batch, seq, paddedSeq, hidden);
  cpu::flattenBackward(dy.data(), dx.data(), batch, seq, paddedSeq, hidden);
  DeviceArray<T> dX(x), dOut(out.size()), dDy(dy), dDx(dx.size());
  cuda::flattenForward(dX.get(), dOut.get(), batch, seq, paddedSeq, hidden, nullptr);
  cuda::flattenBackward(dDy.get(), dDx.get(), batch, seq, paddedSeq, hidden, nullptr);
  expectBitIdentical(dOut.download(), out, "out");
  expectBitIdentical(dDx.download(), dx, "dx");
}

TEST_F(FillAndLossTest, TransposeMatchesCpu) {
  const int64_t batch = 3, m = 5, n = 9;
  const auto x = randomValues<float>(batch * m * n, 9);
  std::vector<float> y(x.size());
  cpu::transposeLastTwo(x.data(), y.data(), batch, m, n);
  DeviceArray<float> dX(x), dY(x.size());
  cuda::transposeLastTwo(dX.get(), dY.get(), batch, m, n, nullptr);
  expectBitIdentical(dY.download(), y, "y");
}

// Both sum in double; the order differs from the CPU's, so the loss may differ in the last
// fp32 bit. The gradient is elementwise: bit-identical.
TEST_F(FillAndLossTest, MseLossMatchesCpu) {
  const int64_t rows = 300;
  const float normalizer = 512.0f, dloss = 8.0f;
  const auto predictions = randomValues<float>(rows, 10, -3.0f, 3.0f);
  const auto targets = randomValues<float>(rows, 11, -3.0f, 3.0f);
  std::vector<float> loss(1), grad(rows);
  cpu::mseLossForward(predictions.data(), targets.data(), loss.data(), rows, normalizer);
  cpu::mseLossBackward(&dloss, predictions.data(), targets.data(), grad.data(), rows, normalizer);
  DeviceArray<float> dP(predictions), dT(targets), dLoss(1), dSeed(std::vector<float>{dloss}),
      dGrad(rows);
  cuda::mseLossForward(dP.get(), dT.get(), dLoss.get(), rows, normalizer, nullptr);
  cuda::mseLossBackward(dSeed.get(), dP.get(), dT.get(), dGrad.get(), rows, normalizer, nullptr);
  expectClose(dLoss.download(), loss, 1e-7, 1e-6, "loss");
  expectBitIdentical(dGrad.download(), grad, "grad");
}

// The gradient alone is the fused kernel's, bit for bit (an ignored row included).
TEST_F(FillAndLossTest, CrossEntropyBackwardMatchesTheFusedKernel) {
  const int64_t batch = 19, classes = 3;
  const float normalizer = 32.0f;
  const auto logits = randomValues<float>(batch * classes, 6, -4.0f, 4.0f);
  std::vector<int32_t> labels(batch);
  for (int64_t r = 0; r < batch; ++r)
    labels[r] = r == 3 ? -100 : int32_t(r % classes);
  DeviceArray<float> dLogits(logits), seed(1), loss(1), fused(batch * classes),
      alone(batch * classes);
  DeviceArray<int32_t> dLabels(labels);
  cuda::fillScalar(seed.get(), 1.0f, 1024.0f, nullptr);
  cuda::crossEntropyForwardBackward(dLogits.get(), dLabels.get(), loss.get(), seed.get(),
                                    fused.get(), batch, classes, normalizer, nullptr);
  cuda::crossEntropyBackward(seed.get(), dLogits.get(), dLabels.get(), alone.get(), batch, classes,
                             normalizer, nullptr);
  EXPECT_EQ(seed.download()[0], 1024.0f);
  expectBitIdentical(alone.download(), fused.download(), "dlogits");
}

} // namespace
} // namespace bertc::cuda::test
