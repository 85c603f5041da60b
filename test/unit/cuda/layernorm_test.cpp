// CUDA LayerNorm (plain, fused with the residual add, and with the dropout before that add)
// against the CPU: the forward, its saved statistics, and the backward, which computes the
// same statistics again, with dgamma and dbeta summed over one row slice and over several
// (the slices' sums then added by the last block of each grid column, which resets its
// ticket).
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

#include <algorithm>

namespace bertc::cuda::test {
namespace {

template <typename T> class LayerNormTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(LayerNormTest, StorageTypes, StorageTypeNames);

constexpr float kEps = 1e-12f;

/// Runs the fused forward and the backward on [rows, cols] and compares with the CPU's
/// add, layerNormForward and layerNormBackward.
template <typename T> void checkLayerNorm(int64_t rows, int64_t cols) {
  const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
  const auto a = randomValues<T>(rows * cols, 1, -2.0f, 3.0f);
  const auto b = randomValues<T>(rows * cols, 2);
  const auto gamma = randomValues<T>(cols, 3, 0.5f, 1.5f), beta = randomValues<T>(cols, 4);
  const auto dy = randomValues<T>(rows * cols, 5);

  std::vector<T> sum(rows * cols), y(rows * cols), dx(rows * cols);
  std::vector<float> dgamma(cols), dbeta(cols);
  cpu::add(a.data(), b.data(), sum.data(), rows * cols);
  cpu::layerNormForward(sum.data(), gamma.data(), beta.data(), y.data(), rows, cols, kEps);
  cpu::layerNormBackward(dy.data(), sum.data(), gamma.data(), dx.data(), dgamma.data(),
                         dbeta.data(), rows, cols, kEps);

  DeviceArray<T> dA(a), dB(b), dSum(rows * cols), dGamma(gamma), dBeta(beta), dY(rows * cols);
  DeviceArray<T> dDy(dy), dDx(rows * cols);
  DeviceArray<float> mean(rows), rstd(rows), dDgamma(cols), dDbeta(cols);
  // (No partial sums with one row slice: a one-float array stands in.)
  DeviceArray<float> partials(std::max<int64_t>(1, layerNormBackwardWorkspaceFloats(rows, cols)));
  DeviceArray<unsigned> tickets(kColumnSumTickets);
  cuda::addLayerNormForward(dA.get(), dB.get(), dSum.get(), dGamma.get(), dBeta.get(), dY.get(),
                            mean.get(), rstd.get(), rows, cols, kEps, nullptr);
  DeviceArray<float> backwardMean(rows), backwardRstd(rows);
  cuda::layerNormBackward(dDy.get(), dSum.get(), dGamma.get(), kEps, backwardMean.get(),
                          backwardRstd.get(), dDx.get(), dDgamma.get(), dDbeta.get(),
                          partials.get(), tickets.get(), rows, cols, nullptr);
  expectTicketsAtZero(tickets, shape);
  expectBitIdentical(dSum.download(), sum, "sum " + shape);
  // The backward computes the statistics again from the sum, as the forward did.
  expectBitIdentical(backwardMean.download(), mean.download(), "backward's mean " + shape);
  expectBitIdentical(backwardRstd.download(), rstd.download(), "backward's rstd " + shape);
  expectClose(dY.download(), y, Tolerance<T>::atol, Tolerance<T>::rtol, "y " + shape);
  expectClose(dDx.download(), dx, Tolerance<T>::atol, Tolerance<T>::rtol, "dx " + shape);
  // fp32 sums over the rows, in a different order from the CPU's.
  expectClose(dDgamma.download(), dgamma, 1e-4, 1e-4, "dgamma " + shape);
  expectClose(dDbeta.download(), dbeta, 1e-4, 1e-4, "dbeta " + shape);

  // The plain forward on the sum gives the fused forward's output and statistics.
  DeviceArray<T> dY2(rows * cols);
  DeviceArray<float> mean2(rows), rstd2(rows);
  cuda::layerNormForward(dSum.get(), dGamma.get(), dBeta.get(), dY2.get(), mean2.get(), rstd2.get(),
                         rows, cols, kEps, nullptr);
  expectBitIdentical(dY2.download(), dY.download(), "plain vs fused " + shape);
  expectBitIdentical(rstd2.download(), rstd.download(), "rstd plain vs fused " + shape);
}

// The accumulating form adds the finished totals to gradient slots: exactly slot + the
// overwriting form's, with one row slice (each block adds its columns' totals) and with
// several (the last block of each grid column adds them), and the same dx.
TYPED_TEST(LayerNormTest, BackwardAccumulateAddsTheTotalsToTheSlots) {
  using T = TypeParam;
  const int64_t cols = 45;
  for (int64_t rows : {int64_t(130), int64_t(600)}) {
    const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
    const auto x = randomValues<T>(rows * cols, 11, -2.0f, 3.0f);
    const auto gamma = randomValues<T>(cols, 12, 0.5f, 1.5f), dy = randomValues<T>(rows * cols, 13);
    const auto gammaStart = randomValues<float>(cols, 14),
               betaStart = randomValues<float>(cols, 15);
    DeviceArray<T> dX(x), dGamma(gamma), dDy(dy), dDx(rows * cols), dAccumulatedDx(rows * cols);
    DeviceArray<float> mean(rows), rstd(rows), dDgamma(cols), dDbeta(cols);
    DeviceArray<float> gammaSlot(gammaStart), betaSlot(betaStart);
    DeviceArray<float> partials(std::max<int64_t>(1, layerNormBackwardWorkspaceFloats(rows, cols)));
    DeviceArray<unsigned> tickets(kColumnSumTickets); // both sums take them, in turn
    cuda::layerNormBackward(dDy.get(), dX.get(), dGamma.get(), kEps, mean.get(), rstd.get(),
                            dDx.get(), dDgamma.get(), dDbeta.get(), partials.get(), tickets.get(),
                            rows, cols, nullptr);
    cuda::layerNormBackwardAccumulate(
        dDy.get(), dX.get(), dGamma.get(), kEps, mean.get(), rstd.get(), dAccumulatedDx.get(),
        gammaSlot.get(), betaSlot.get(), partials.get(), tickets.get(), rows, cols, nullptr);
    std::vector<float> gammaExpected(cols), betaExpected(cols);
    const std::vector<float> dgamma = dDgamma.download(), dbeta = dDbeta.download();
    for (int64_t c = 0; c < cols; ++c) {
      gammaExpected[c] = gammaStart[c] + dgamma[c];
      betaExpected[c] = betaStart[c] + dbeta[c];
    }
    expectBitIdentical(gammaSlot.download(), gammaExpected, "gamma slot + dgamma " + shape);
    expectBitIdentical(betaSlot.download(), betaExpected, "beta slot + dbeta " + shape);
    expectBitIdentical(dAccumulatedDx.download(), dDx.download(), "dx " + shape);
    expectTicketsAtZero(tickets, shape);
  }
}

// The dropout of the first addend fused in: sum bit-identical to the CPU's dropoutForward
// then add (dropout's rows the samples), y and the statistics to addLayerNormForward on the
// dropped-out addend, written elsewhere and over either addend. Widths of 768 (a lane's
// four columns one Philox call), 77 (groups straddle tokens) and 6 with one-token samples;
// a key placing the micro-batch after others.
TYPED_TEST(LayerNormTest, DropoutFusedForwardGivesTheBitsOfDropoutThenAdd) {
  using T = TypeParam;
  struct Shape {
    int64_t samples, tokensPerSample, cols;
  };
  const DropoutKey key{0x5eed5eedull, 3, 7, 12};
  for (const Shape &shape : {Shape{6, 10, 768}, Shape{9, 7, 77}, Shape{40, 1, 6}}) {
    const int64_t rows = shape.samples * shape.tokensPerSample, cols = shape.cols, n = rows * cols;
    const std::string name = std::to_string(rows) + "x" + std::to_string(cols);
    const auto a = randomValues<T>(n, 21, -2.0f, 3.0f), b = randomValues<T>(n, 22);
    const auto gamma = randomValues<T>(cols, 23, 0.5f, 1.5f), beta = randomValues<T>(cols, 24);
    std::vector<T> dropped(n), sum(n);
    cpu::dropoutForward(a.data(), dropped.data(), shape.samples, shape.tokensPerSample * cols, 0.1f,
                        key);
    cpu::add(dropped.data(), b.data(), sum.data(), n);

    DeviceArray<T> dA(a), dB(b), dDropped(dropped), dGamma(gamma), dBeta(beta);
    DeviceArray<T> dSum(n), dY(n), expectedSum(n), expectedY(n), overA(a), overB(b), y2(n);
    DeviceArray<float> mean(rows), rstd(rows), expectedMean(rows), expectedRstd(rows);
    const auto fused = [&](const T *x, const T *residual, T *out, T *normalised) {
      dropoutAddLayerNormForward(x, residual, out, dGamma.get(), dBeta.get(), normalised,
                                 mean.get(), rstd.get(), shape.samples, shape.tokensPerSample, cols,
                                 kEps, 0.1f, key, nullptr);
    };
    fused(dA.get(), dB.get(), dSum.get(), dY.get());
    addLayerNormForward(dDropped.get(), dB.get(), expectedSum.get(), dGamma.get(), dBeta.get(),
                        expectedY.get(), expectedMean.get(), expectedRstd.get(), rows, cols, kEps,
                        nullptr);
    expectBitIdentical(dSum.download(), sum, "dropped sum " + name);
    expectBitIdentical(expectedSum.download(), sum, "sum of the dropped addend " + name);
    expectBitIdentical(dY.download(), expectedY.download(), "y " + name);
    expectBitIdentical(mean.download(), expectedMean.download(), "mean " + name);
    expectBitIdentical(rstd.download(), expectedRstd.download(), "rstd " + name);
    fused(overA.get(), dB.get(), overA.get(), y2.get());
    expectBitIdentical(overA.download(), sum, "sum over a " + name);
    fused(dA.get(), overB.get(), overB.get(), y2.get());
    expectBitIdentical(overB.download(), sum, "sum over b " + name);
    expectBitIdentical(y2.download(), expectedY.download(), "y with the sum over b " + name);
  }
}

TYPED_TEST(LayerNormTest, MatchesCpuAtBertBaseWidth) { checkLayerNorm<TypeParam>(67, 768); }

TYPED_TEST(LayerNormTest, MatchesCpuAtOddWidth) { checkLayerNorm<TypeParam>(130, 45); }

TYPED_TEST(LayerNormTest, MatchesCpuOverSeveralRowSlices) { checkLayerNorm<TypeParam>(600, 45); }

} // namespace
} // namespace bertc::cuda::test
