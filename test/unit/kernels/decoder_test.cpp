// Tests of the decoder kernels: mul, SiLU, RMSNorm and rotary embeddings. Forwards against
// hand-derived values, backwards against central finite differences of their forwards.
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

TEST(Mul, MultipliesElementwiseIntoAliasedOutput) {
  std::vector<float> a = {1.5f, -2.0f, 0.5f}, b = {2.0f, 3.0f, -0.5f};
  mul(a.data(), b.data(), a.data(), 3);
  EXPECT_EQ(a, (std::vector<float>{3.0f, -6.0f, -0.25f}));
}

// silu(0) = 0; silu(1) = 1 / (1 + e^-1) = 0.7310585786300049; silu(-1) = -0.2689414213699951.
// silu'(0) = 0.5; silu'(1) = s (1 + 1 - s) with s = 0.7310585786 = 0.9276705118714869.
TEST(Silu, ForwardAndDerivativeMatchClosedForm) {
  std::vector<float> x = {0.0f, 1.0f, -1.0f}, y(3), dy = {1.0f, 1.0f, 2.0f}, dx(3);
  siluForward(x.data(), y.data(), 3);
  siluBackward(dy.data(), x.data(), dx.data(), 3);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 0.7310585786300049, 1e-7);
  EXPECT_NEAR(y[2], -0.2689414213699951, 1e-7);
  EXPECT_NEAR(dx[0], 0.5, 1e-7);
  EXPECT_NEAR(dx[1], 0.9276705118714869, 1e-6);
  // silu'(-1) = s (1 - (1 - s)) = s^2 with s = 0.2689414213699951, times dy = 2.
  EXPECT_NEAR(dx[2], 2 * 0.2689414213699951 * 0.2689414213699951, 1e-6);
}

TEST(Silu, BackwardMatchesFiniteDifferences) {
  const int64_t n = 24;
  std::vector<float> x = randomTensor(n, 1, -4.0f, 4.0f), dy = randomTensor(n, 2), dx(n);
  siluBackward(dy.data(), x.data(), dx.data(), n);
  auto forward = [&] {
    std::vector<float> y(n);
    siluForward(x.data(), y.data(), n);
    return y;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
}

// Row (3, 4): mean square (9 + 16) / 2 = 12.5, r = 1 / sqrt(12.5 + eps); eps = 0.5 makes
// r = 1 / sqrt(13) = 0.2773500981. y = w x r with w = (2, -1).
TEST(RmsNorm, ForwardMatchesHandDerivedRow) {
  std::vector<float> x = {3.0f, 4.0f}, w = {2.0f, -1.0f}, y(2);
  rmsNormForward(x.data(), w.data(), y.data(), 1, 2, 0.5f);
  const double r = 1.0 / std::sqrt(13.0);
  EXPECT_NEAR(y[0], 2 * 3 * r, 1e-6);
  EXPECT_NEAR(y[1], -1 * 4 * r, 1e-6);
}

// With 16-bit storage, x r is rounded to the storage type before the weight multiplies it,
// as transformers casts the normalised row back to the input's dtype.
TEST(RmsNorm, RoundsNormalisedRowBeforeWeightInBf16) {
  using bertc::toBf16;
  using bertc::toFloat;
  std::vector<bertc::bf16> x = {toBf16(3.0f), toBf16(4.0f)}, w = {toBf16(3.5f), toBf16(3.5f)};
  std::vector<bertc::bf16> y(2);
  rmsNormForward(x.data(), w.data(), y.data(), 1, 2, 0.5f);
  const float r = float(1.0 / std::sqrt(13.0));
  for (int c = 0; c < 2; ++c) {
    const float normalised = toFloat(toBf16(toFloat(x[c]) * r));
    EXPECT_EQ(toFloat(y[c]), toFloat(toBf16(3.5f * normalised))) << c;
  }
  // 4 r = 1.1094004 rounds to 1.109375 in bf16; 3.5 times that, 3.8828125, rounds to 3.875,
  // where 3.5 times the unrounded value, 3.8829014, would round to 3.890625.
  EXPECT_EQ(toFloat(y[1]), 3.875f);
}

TEST(RmsNorm, BackwardMatchesFiniteDifferences) {
  const int64_t rows = 5, cols = 12;
  const float eps = 1e-5f;
  std::vector<float> x = randomTensor(rows * cols, 3, -2.0f, 2.0f);
  std::vector<float> w = randomTensor(cols, 4, 0.5f, 1.5f), dy = randomTensor(rows * cols, 5);
  std::vector<float> dx(rows * cols), dw(cols);
  rmsNormBackward(dy.data(), x.data(), w.data(), dx.data(), dw.data(), rows, cols, eps);
  auto forward = [&] {
    std::vector<float> y(rows * cols);
    rmsNormForward(x.data(), w.data(), y.data(), rows, cols, eps);
    return y;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward, 1e-3f), "dx");
  expectGradientNear(dw, numericGradient(w, dy, forward, 1e-3f), "dweight");
}

// One head of 4 values (pairs (0, 2) and (1, 3)) at position 3 with inv_freq (1, 0.5):
// angles 3 and 1.5. y0 = x0 cos 3 - x2 sin 3, y2 = x2 cos 3 + x0 sin 3, likewise for 1.5.
TEST(Rope, ForwardRotatesHalvesByPositionTimesFrequency) {
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f}, y(4);
  const std::vector<int32_t> positions = {3};
  const float invFreq[] = {1.0f, 0.5f};
  ropeForward(x.data(), positions.data(), y.data(), 1, 1, 4, invFreq);
  EXPECT_NEAR(y[0], 1 * std::cos(3.0) - 3 * std::sin(3.0), 1e-6);
  EXPECT_NEAR(y[2], 3 * std::cos(3.0) + 1 * std::sin(3.0), 1e-6);
  EXPECT_NEAR(y[1], 2 * std::cos(1.5) - 4 * std::sin(1.5), 1e-6);
  EXPECT_NEAR(y[3], 4 * std::cos(1.5) + 2 * std::sin(1.5), 1e-6);
}

// The angle is the token's position_ids value, not its index: position 0 is the identity,
// whatever the token's place (packing restarts positions per document).
TEST(Rope, UsesPositionIdsNotTokenIndex) {
  std::vector<float> x = randomTensor(2 * 8, 6), y(2 * 8);
  const std::vector<int32_t> positions = {0, 0};
  const float invFreq[] = {1.0f, 0.25f};
  ropeForward(x.data(), positions.data(), y.data(), 2, 2, 4, invFreq);
  EXPECT_EQ(y, x);
}

TEST(Rope, BackwardMatchesFiniteDifferencesAndInvertsForward) {
  const int64_t tokens = 3, heads = 2, headDim = 6, cols = heads * headDim;
  const std::vector<int32_t> positions = {5, 0, 17};
  const float invFreq[] = {1.0f, 0.1f, 0.01f};
  std::vector<float> x = randomTensor(tokens * cols, 7), dy = randomTensor(tokens * cols, 8);
  std::vector<float> dx(tokens * cols);
  ropeBackward(dy.data(), positions.data(), dx.data(), tokens, heads, headDim, invFreq);
  auto forward = [&] {
    std::vector<float> y(tokens * cols);
    ropeForward(x.data(), positions.data(), y.data(), tokens, heads, headDim, invFreq);
    return y;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
  // A rotation's transpose is its inverse: backward(forward(x)) = x, in place.
  std::vector<float> roundTrip = forward();
  ropeBackward(roundTrip.data(), positions.data(), roundTrip.data(), tokens, heads, headDim,
               invFreq);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(roundTrip[i], x[i], 1e-6) << i;
}
