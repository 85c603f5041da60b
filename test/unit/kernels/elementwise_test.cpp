// Tests of the elementwise kernels: add, scale, accumulate, GELU (erf and tanh forms), tanh, ReLU,
// dropout (and dropoutAdd).
// Forwards against closed-form values, backwards against finite differences, dropout's mask
// against the counter RNG the header specifies.
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

TEST(Add, SumsElementwiseIntoAliasedOutput) {
  std::vector<float> a = {1.0f, -2.0f, 0.5f}, b = {0.25f, 3.0f, -0.5f};
  add(a.data(), b.data(), a.data(), 3);
  EXPECT_EQ(a, (std::vector<float>{1.25f, 1.0f, 0.0f}));
}

// An fp32 product rounded to the storage type. In bf16 (8 significant bits) 1.0078125 x 3 =
// 3.0234375 is 193.5 steps of 2^-6 above 0, a tie, which goes to the even 194: 3.03125; and
// 3 x 0.1f = 0.300000012 is 153.6 steps of 2^-9: 154, 0.30078125.
TEST(Scale, MultipliesInFp32AndRoundsOnce) {
  std::vector<float> x = {1.0f, -2.5f, 0.0f}, y(3);
  scale(x.data(), y.data(), 4.0f, 3);
  EXPECT_EQ(y, (std::vector<float>{4.0f, -10.0f, 0.0f}));
  scale(x.data(), x.data(), 0.5f, 3);
  EXPECT_EQ(x, (std::vector<float>{0.5f, -1.25f, 0.0f}));
  std::vector<bertc::bf16> h = {bertc::fromFloat<bertc::bf16>(1.0078125f),
                                bertc::fromFloat<bertc::bf16>(3.0f)},
                           out(2);
  scale(h.data(), out.data(), 3.0f, 2);
  EXPECT_EQ(bertc::toFloat(out[0]), 3.03125f);
  scale(h.data(), out.data(), 0.1f, 2);
  EXPECT_EQ(bertc::toFloat(out[1]), 0.30078125f);
}

TEST(Accumulate, AddsIntoExistingGradient) {
  std::vector<float> grad = {1.0f, 2.0f}, g = {0.5f, -4.0f};
  accumulate(g.data(), grad.data(), 2);
  accumulate(g.data(), grad.data(), 2);
  EXPECT_EQ(grad, (std::vector<float>{2.0f, -6.0f}));
}

// gelu(x) = x * Phi(x); Phi(1) = 0.8413447460685429, Phi(-1) = 1 - Phi(1).
TEST(Gelu, ForwardMatchesClosedForm) {
  std::vector<float> x = {0.0f, 1.0f, -1.0f, 10.0f, -10.0f}, y(5);
  geluForward(x.data(), y.data(), 5);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 0.8413447460685429, 1e-6);
  EXPECT_NEAR(y[2], -0.15865525393145707, 1e-6);
  EXPECT_EQ(y[3], 10.0f);
  EXPECT_NEAR(y[4], 0.0f, 1e-6);
}

// gelu'(x) = Phi(x) + x phi(x): 0.5 at 0, Phi(1) + phi(1) = 0.8413447 + 0.2419707 at 1.
TEST(Gelu, DerivativeMatchesClosedForm) {
  std::vector<float> x = {0.0f, 1.0f}, dy = {1.0f, 1.0f}, dx(2);
  geluBackward(dy.data(), x.data(), dx.data(), 2);
  EXPECT_NEAR(dx[0], 0.5, 1e-6);
  EXPECT_NEAR(dx[1], 0.8413447460685429 + 0.24197072451914337, 1e-6);
}

TEST(Gelu, BackwardMatchesFiniteDifferences) {
  const int64_t n = 24;
  std::vector<float> x = randomTensor(n, 1, -3.0f, 3.0f), dy = randomTensor(n, 2), dx(n);
  geluBackward(dy.data(), x.data(), dx.data(), n);
  auto forward = [&] {
    std::vector<float> y(n);
    geluForward(x.data(), y.data(), n);
    return y;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
}

// gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated in double by
// Python's math module. Each value is at least 1.7e-5 from the erf GELU's (at 1: 0.8413447).
TEST(GeluTanh, ForwardMatchesHandComputedValues) {
  std::vector<float> x = {0.0f, 1.0f, -1.0f, 2.0f, 0.5f, -3.0f, 10.0f, -10.0f}, y(8);
  geluTanhForward(x.data(), y.data(), 8);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 0.8411919906082768, 1e-6);
  EXPECT_NEAR(y[2], -0.15880800939172324, 1e-6);
  EXPECT_NEAR(y[3], 1.954597694087775, 2e-6);
  EXPECT_NEAR(y[4], 0.34571400982514394, 1e-6);
  EXPECT_NEAR(y[5], -0.0036373920817729943, 1e-7);
  EXPECT_EQ(y[6], 10.0f);
  EXPECT_NEAR(y[7], 0.0f, 1e-7);
}

// The derivative 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), t the tanh
// above, by Python's math module; dy scales it.
TEST(GeluTanh, DerivativeMatchesHandComputedValues) {
  std::vector<float> x = {0.0f, 1.0f, -1.0f, 2.0f, 0.5f, -3.0f}, dy = {1, 1, 1, 1, 1, -2}, dx(6);
  geluTanhBackward(dy.data(), x.data(), dx.data(), 6);
  EXPECT_NEAR(dx[0], 0.5, 1e-7);
  EXPECT_NEAR(dx[1], 1.0829640838457826, 1e-6);
  EXPECT_NEAR(dx[2], -0.08296408384578255, 1e-6);
  EXPECT_NEAR(dx[3], 1.0860992566236183, 1e-6);
  EXPECT_NEAR(dx[4], 0.8673699035346424, 1e-6);
  EXPECT_NEAR(dx[5], -2 * -0.011584166630969516, 1e-6);
}

TEST(GeluTanh, BackwardMatchesFiniteDifferences) {
  const int64_t n = 24;
  std::vector<float> x = randomTensor(n, 11, -4.0f, 4.0f), dy = randomTensor(n, 12), dx(n);
  geluTanhBackward(dy.data(), x.data(), dx.data(), n);
  auto forward = [&] {
    std::vector<float> y(n);
    geluTanhForward(x.data(), y.data(), n);
    return y;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
}

TEST(Tanh, ForwardMatchesClosedForm) {
  std::vector<float> x = {0.0f, 0.5493061443340549f, -20.0f}, y(3); // atanh(0.5)
  tanhForward(x.data(), y.data(), 3);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 0.5, 1e-6);
  EXPECT_EQ(y[2], -1.0f);
}

TEST(Tanh, BackwardMatchesFiniteDifferences) {
  const int64_t n = 24;
  std::vector<float> x = randomTensor(n, 3, -2.0f, 2.0f), dy = randomTensor(n, 4), y(n), dx(n);
  tanhForward(x.data(), y.data(), n);
  tanhBackward(dy.data(), y.data(), dx.data(), n);
  auto forward = [&] {
    std::vector<float> out(n);
    tanhForward(x.data(), out.data(), n);
    return out;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
}

TEST(Relu, ForwardAndBackwardByHand) {
  // The gradient passes where the output is positive; at x = 0 it is 0, as PyTorch's.
  std::vector<float> x = {-2.0f, 0.0f, 0.5f, 3.0f}, y(4), dy = {1.0f, 2.0f, 3.0f, 4.0f}, dx(4);
  reluForward(x.data(), y.data(), 4);
  reluBackward(dy.data(), y.data(), dx.data(), 4);
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.0f, 0.5f, 3.0f}));
  EXPECT_EQ(dx, (std::vector<float>{0.0f, 0.0f, 3.0f, 4.0f}));
}

namespace {
constexpr float kRate = 0.3f;
constexpr bertc::DropoutKey kKey{1234, 7, 5, 0};
} // namespace

TEST(Dropout, RateZeroCopies) {
  std::vector<float> x = randomTensor(16, 5), y(16), dx(16);
  dropoutForward(x.data(), y.data(), 4, 4, 0.0f, kKey);
  dropoutBackward(x.data(), dx.data(), 4, 4, 0.0f, kKey);
  EXPECT_EQ(y, x);
  EXPECT_EQ(dx, x);
}

TEST(Dropout, KeepFractionIsOneMinusRate) {
  const int64_t n = 200000;
  std::vector<float> x(n, 1.0f), y(n);
  dropoutForward(x.data(), y.data(), 100, n / 100, kRate, kKey);
  int64_t kept = 0;
  for (float value : y)
    kept += value != 0.0f;
  // Binomial standard deviation sqrt(0.3 * 0.7 / n) = 0.001; allow five of them.
  EXPECT_NEAR(double(kept) / double(n), 1.0 - kRate, 0.005);
}

// The mask is the header's: element i of row r is kept iff dropoutKeep(key, r, i, rate),
// kept values are scaled by 1 / (1 - rate), in the forward and the backward alike.
TEST(Dropout, ForwardAndBackwardApplyTheSpecifiedMask) {
  const int64_t rows = 8, rowSize = 125, n = rows * rowSize;
  std::vector<float> x = randomTensor(n, 6), dy = randomTensor(n, 7), y(n), dx(n);
  dropoutForward(x.data(), y.data(), rows, rowSize, kRate, kKey);
  dropoutBackward(dy.data(), dx.data(), rows, rowSize, kRate, kKey);
  const float keptScale = 1.0f / (1.0f - kRate);
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = bertc::dropoutKeep(kKey, i / rowSize, uint64_t(i % rowSize), kRate);
    EXPECT_EQ(y[i], keep ? x[i] * keptScale : 0.0f) << i;
    EXPECT_EQ(dx[i], keep ? dy[i] * keptScale : 0.0f) << i;
  }
}

// A batch split into micro-batches gets the masks it gets whole: the key's firstRow places
// each micro-batch's rows within the batch.
TEST(Dropout, MicroBatchesGetTheWholeBatchsMasks) {
  const int64_t rows = 6, rowSize = 50, n = rows * rowSize;
  std::vector<float> x = randomTensor(n, 10), whole(n), split(n);
  dropoutForward(x.data(), whole.data(), rows, rowSize, kRate, kKey);
  bertc::DropoutKey second = kKey;
  second.firstRow = 2;
  dropoutForward(x.data(), split.data(), 2, rowSize, kRate, kKey);
  dropoutForward(x.data() + 2 * rowSize, split.data() + 2 * rowSize, 4, rowSize, kRate, second);
  EXPECT_EQ(split, whole);
}

// dropoutAdd keeps element i of row r iff dropoutKeep(key, r, i, rate), as dropoutForward,
// and adds the residual; rate 0 adds. Rows of 40,000 elements span threads' chunks.
TEST(DropoutAdd, AddsTheResidualToTheSpecifiedMask) {
  const int64_t rows = 3, rowSize = 40000, n = rows * rowSize;
  std::vector<float> x = randomTensor(n, 11), residual = randomTensor(n, 12), sum(n);
  dropoutAdd(x.data(), residual.data(), sum.data(), rows, rowSize, kRate, kKey);
  const float keptScale = 1.0f / (1.0f - kRate);
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = bertc::dropoutKeep(kKey, i / rowSize, uint64_t(i % rowSize), kRate);
    EXPECT_EQ(sum[i], (keep ? x[i] * keptScale : 0.0f) + residual[i]) << i;
  }
  dropoutAdd(x.data(), residual.data(), sum.data(), rows, rowSize, 0.0f, kKey);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(sum[i], x[i] + residual[i]) << i;
}

// In 16 bits the dropped value is rounded before the add, so the sum has the bits of
// dropoutForward then add, written elsewhere or over either addend.
template <typename T> void expectDropoutAddIsDropoutThenAdd(const std::string &type) {
  const int64_t rows = 5, rowSize = 77, n = rows * rowSize;
  std::vector<T> x(n), residual(n), dropped(n), expected(n), sum(n);
  const std::vector<float> xValues = randomTensor(n, 13), residualValues = randomTensor(n, 14);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = bertc::fromFloat<T>(3.0f * xValues[i]);
    residual[i] = bertc::fromFloat<T>(residualValues[i]);
  }
  dropoutForward(x.data(), dropped.data(), rows, rowSize, kRate, kKey);
  add(dropped.data(), residual.data(), expected.data(), n);
  dropoutAdd(x.data(), residual.data(), sum.data(), rows, rowSize, kRate, kKey);
  std::vector<T> overX = x, overResidual = residual;
  dropoutAdd(overX.data(), residual.data(), overX.data(), rows, rowSize, kRate, kKey);
  dropoutAdd(x.data(), overResidual.data(), overResidual.data(), rows, rowSize, kRate, kKey);
  for (int64_t i = 0; i < n; ++i) {
    const float want = bertc::toFloat(expected[i]);
    EXPECT_EQ(bertc::toFloat(sum[i]), want) << type << " " << i;
    EXPECT_EQ(bertc::toFloat(overX[i]), want) << type << " over x " << i;
    EXPECT_EQ(bertc::toFloat(overResidual[i]), want) << type << " over the residual " << i;
  }
}

TEST(DropoutAdd, SixteenBitSumsHaveTheBitsOfDropoutThenAdd) {
  expectDropoutAddIsDropoutThenAdd<bertc::bf16>("bf16");
  expectDropoutAddIsDropoutThenAdd<bertc::fp16>("fp16");
}

TEST(Dropout, BackwardMatchesFiniteDifferences) {
  const int64_t n = 40;
  std::vector<float> x = randomTensor(n, 8), dy = randomTensor(n, 9), dx(n);
  dropoutBackward(dy.data(), dx.data(), 4, n / 4, kRate, kKey);
  auto forward = [&] {
    std::vector<float> y(n);
    dropoutForward(x.data(), y.data(), 4, n / 4, kRate, kKey);
    return y;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
}

TEST(Dropout, MaskChangesWithSeedStepStreamAndRow) {
  const int64_t rows = 2, rowSize = 128, n = rows * rowSize;
  std::vector<float> ones(n, 1.0f), base(n), other(n);
  auto maskWith = [&](bertc::DropoutKey key) {
    dropoutForward(ones.data(), other.data(), rows, rowSize, kRate, key);
    return other;
  };
  dropoutForward(ones.data(), base.data(), rows, rowSize, kRate, kKey);
  EXPECT_NE(base, maskWith({kKey.seed + 1, kKey.step, kKey.stream, 0}));
  EXPECT_NE(base, maskWith({kKey.seed, kKey.step + 1, kKey.stream, 0}));
  EXPECT_NE(base, maskWith({kKey.seed, kKey.step, kKey.stream + 1, 0}));
  EXPECT_NE(base, maskWith({kKey.seed, kKey.step, kKey.stream, 1}));
  EXPECT_EQ(base, maskWith(kKey));
  // Rows of one call differ from each other.
  EXPECT_FALSE(std::equal(base.begin(), base.begin() + rowSize, base.begin() + rowSize));
}
