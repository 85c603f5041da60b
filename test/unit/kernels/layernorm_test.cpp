// Tests of the LayerNorm kernels: the forward on a hand-computed vector and a constant row,
// the backward's dx, dgamma and dbeta against finite differences of the forward.
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

// x = [1, 2, 3, 4]: mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25,
// rstd = 1 / sqrt(1.25 + 1e-5) = 0.894423613312618, xhat = [-1.5, -0.5, 0.5, 1.5] * rstd
//      = [-1.3416354199689269, -0.447211806656309, 0.447211806656309, 1.3416354199689269];
// y = xhat * [1, 2, 0.5, -1] + [0, 0.5, 1, 0].
TEST(LayerNorm, ForwardMatchesHandComputedRow) {
  std::vector<float> x = {1, 2, 3, 4}, gamma = {1, 2, 0.5f, -1}, beta = {0, 0.5f, 1, 0};
  std::vector<float> y(4);
  layerNormForward(x.data(), gamma.data(), beta.data(), y.data(), 1, 4, 1e-5f);
  EXPECT_NEAR(y[0], -1.3416354199689269, 1e-6);
  EXPECT_NEAR(y[1], 2 * -0.447211806656309 + 0.5, 1e-6);
  EXPECT_NEAR(y[2], 0.5 * 0.447211806656309 + 1, 1e-6);
  EXPECT_NEAR(y[3], -1.3416354199689269, 1e-6);
}

// A constant row has xhat = 0 everywhere, so y = beta; rows are normalised independently.
TEST(LayerNorm, ConstantRowGivesBeta) {
  std::vector<float> x = {3, 3, 3, 1, 2, 3}, gamma = {2, 2, 2}, beta = {0.5f, -1, 0};
  std::vector<float> y(6);
  layerNormForward(x.data(), gamma.data(), beta.data(), y.data(), 2, 3, 1e-12f);
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[2], 0.0f);
  // Second row [1, 2, 3]: xhat = [-1, 0, 1] / sqrt(2/3) = [-1.2247449, 0, 1.2247449].
  EXPECT_NEAR(y[3], 2 * -1.224744871391589 + 0.5, 1e-5);
  EXPECT_NEAR(y[4], -1.0, 1e-6);
  EXPECT_NEAR(y[5], 2 * 1.224744871391589, 1e-5);
}

TEST(LayerNorm, BackwardMatchesFiniteDifferences) {
  const int64_t rows = 3, cols = 5;
  const float eps = 1e-5f;
  std::vector<float> x = randomTensor(rows * cols, 30, -2.0f, 2.0f);
  std::vector<float> gamma = randomTensor(cols, 31, 0.5f, 1.5f);
  std::vector<float> beta = randomTensor(cols, 32);
  std::vector<float> dy = randomTensor(rows * cols, 33);
  // dgamma and dbeta start with garbage: the backward overwrites them.
  std::vector<float> dx(rows * cols), dgamma(cols, 99.0f), dbeta(cols, 99.0f);
  layerNormBackward(dy.data(), x.data(), gamma.data(), dx.data(), dgamma.data(), dbeta.data(), rows,
                    cols, eps);
  auto forward = [&] {
    std::vector<float> y(rows * cols);
    layerNormForward(x.data(), gamma.data(), beta.data(), y.data(), rows, cols, eps);
    return y;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
  expectGradientNear(dgamma, numericGradient(gamma, dy, forward), "dgamma");
  expectGradientNear(dbeta, numericGradient(beta, dy, forward), "dbeta");
}

// The accumulating form adds the finished totals to gradient slots: exactly slot + the
// overwriting form's, and the same dx. 300 rows: more than one block of rows.
TEST(LayerNorm, BackwardAccumulateAddsTheTotalsToTheSlots) {
  const int64_t rows = 300, cols = 7;
  const float eps = 1e-12f;
  std::vector<float> x = randomTensor(rows * cols, 40, -2.0f, 2.0f);
  std::vector<float> gamma = randomTensor(cols, 41, 0.5f, 1.5f);
  std::vector<float> dy = randomTensor(rows * cols, 42);
  std::vector<float> dx(rows * cols), dgamma(cols), dbeta(cols);
  layerNormBackward(dy.data(), x.data(), gamma.data(), dx.data(), dgamma.data(), dbeta.data(), rows,
                    cols, eps);
  const std::vector<float> gammaStart = randomTensor(cols, 43), betaStart = randomTensor(cols, 44);
  std::vector<float> gammaSlot = gammaStart, betaSlot = betaStart, accumulatedDx(rows * cols);
  layerNormBackwardAccumulate(dy.data(), x.data(), gamma.data(), accumulatedDx.data(),
                              gammaSlot.data(), betaSlot.data(), rows, cols, eps);
  for (int64_t c = 0; c < cols; ++c) {
    EXPECT_EQ(gammaSlot[c], gammaStart[c] + dgamma[c]) << "column " << c;
    EXPECT_EQ(betaSlot[c], betaStart[c] + dbeta[c]) << "column " << c;
  }
  EXPECT_EQ(accumulatedDx, dx);
}
