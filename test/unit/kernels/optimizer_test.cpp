// Tests of adamwUpdate against two AdamW steps worked out by hand (in double, in the
// comments), with and without weight decay; of the working copy it rewrites for a 16-bit
// parameter; and of the global gradient-norm clipping.
#include "bertc/runtime/cpu_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace bertc;
using namespace bertc::cpu;

namespace {
/// Two parameters, run for two steps with the given weight decay; returns them after each.
struct TwoSteps {
  std::vector<float> param = {1.0f, -2.0f}, m = {0.0f, 0.0f}, v = {0.0f, 0.0f};

  void step(const std::vector<float> &grad, double weightDecay, int64_t step) {
    const AdamWConfig config{0.1, 0.9, 0.999, 1e-8, weightDecay, step};
    adamwUpdate(param.data(), grad.data(), m.data(), v.data(), 2, config);
  }
};
} // namespace

// lr 0.1, betas (0.9, 0.999), eps 1e-8, weight decay 0.01; gradients [0.5, -1] then
// [-0.25, 3]; bias corrections 1 - 0.9 = 0.1 and 1 - 0.999 = 0.001 at step 1,
// 1 - 0.81 = 0.19 and 1 - 0.998001 = 0.001999 at step 2.
//
// Parameter 0 (p = 1):
//   step 1: p = 1 * (1 - 0.1 * 0.01) = 0.999; m = 0.1 * 0.5 = 0.05; v = 0.001 * 0.25 = 0.00025
//           denom = sqrt(0.00025) / sqrt(0.001) + 1e-8 = 0.50000001
//           p = 0.999 - (0.1 / 0.1) * 0.05 / 0.50000001 = 0.999 - 0.099999998 = 0.899000002
//   step 2: p = 0.899000002 * 0.999 = 0.898101001998
//           m = 0.9 * 0.05 + 0.1 * -0.25 = 0.02; v = 0.999 * 0.00025 + 0.001 * 0.0625 = 0.00031225
//           denom = sqrt(0.00031225) / sqrt(0.001999) + 1e-8 = 0.395225390701667
//           p = 0.898101001998 - (0.1 / 0.19) * 0.02 / 0.395225390701667
//             = 0.898101001998 - 0.526315789474 * 0.050604036255 = 0.871467298706
// Parameter 1 (p = -2):
//   step 1: p = -2 * 0.999 = -1.998; m = -0.1; v = 0.001
//           denom = sqrt(0.001) / sqrt(0.001) + 1e-8 = 1.00000001
//           p = -1.998 + 1 * 0.1 / 1.00000001 = -1.998 + 0.099999999 = -1.898000001
//   step 2: p = -1.898000001 * 0.999 = -1.896102000999
//           m = 0.9 * -0.1 + 0.1 * 3 = 0.21; v = 0.999 * 0.001 + 0.001 * 9 = 0.009999
//           denom = sqrt(0.009999) / sqrt(0.001999) + 1e-8 = 2.236515380057
//           p = -1.896102000999 - 0.526315789474 * 0.21 / 2.236515380057
//             = -1.896102000999 - 0.049418983108 = -1.945520984108
TEST(AdamW, TwoStepsWithWeightDecayMatchHandComputation) {
  TwoSteps state;
  state.step({0.5f, -1.0f}, 0.01, 1);
  EXPECT_NEAR(state.param[0], 0.899000002, 1e-6);
  EXPECT_NEAR(state.param[1], -1.898000001, 1e-6);
  EXPECT_NEAR(state.m[0], 0.05, 1e-8);
  EXPECT_NEAR(state.v[1], 0.001, 1e-10);

  state.step({-0.25f, 3.0f}, 0.01, 2);
  EXPECT_NEAR(state.param[0], 0.871467298706, 1e-6);
  EXPECT_NEAR(state.param[1], -1.945520984108, 1e-6);
  EXPECT_NEAR(state.m[0], 0.02, 1e-8);
  EXPECT_NEAR(state.m[1], 0.21, 1e-7);
  EXPECT_NEAR(state.v[0], 0.00031225, 1e-10);
  EXPECT_NEAR(state.v[1], 0.009999, 1e-9);
}

// The same run without decay: only the p *= 0.999 factors disappear.
//   parameter 0: step 1 p = 1 - 0.099999998 = 0.900000002;
//                step 2 p = 0.900000002 - 0.026633703293 = 0.873366298707
//   parameter 1: step 1 p = -2 + 0.099999999 = -1.900000001;
//                step 2 p = -1.900000001 - 0.049418983108 = -1.949418984108
TEST(AdamW, TwoStepsWithoutWeightDecayMatchHandComputation) {
  TwoSteps state;
  state.step({0.5f, -1.0f}, 0.0, 1);
  EXPECT_NEAR(state.param[0], 0.900000002, 1e-6);
  EXPECT_NEAR(state.param[1], -1.900000001, 1e-6);

  state.step({-0.25f, 3.0f}, 0.0, 2);
  EXPECT_NEAR(state.param[0], 0.873366298707, 1e-6);
  EXPECT_NEAR(state.param[1], -1.949418984108, 1e-6);
  EXPECT_NEAR(state.m[1], 0.21, 1e-7);
  EXPECT_NEAR(state.v[1], 0.009999, 1e-9);
}

// beta1 = 0.3 makes torch's lerp weight 0.7 >= 0.5, which takes its other form; the moment
// must still be 0.3 m + 0.7 g: 0.7 * 2 = 1.4, then 0.3 * 1.4 + 0.7 * -1 = -0.28.
TEST(AdamW, SmallBeta1KeepsTheMovingAverage) {
  std::vector<float> param = {0.0f}, m = {0.0f}, v = {0.0f};
  std::vector<float> grad = {2.0f};
  adamwUpdate(param.data(), grad.data(), m.data(), v.data(), 1,
              AdamWConfig{0.1, 0.3, 0.999, 1e-8, 0.0, 1});
  EXPECT_NEAR(m[0], 1.4, 1e-6);
  grad[0] = -1.0f;
  adamwUpdate(param.data(), grad.data(), m.data(), v.data(), 1,
              AdamWConfig{0.1, 0.3, 0.999, 1e-8, 0.0, 2});
  EXPECT_NEAR(m[0], -0.28, 1e-6);
}

/// Whether a and b hold the same bits.
template <typename T> bool sameBits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Two steps on n random values, over several of the threads' chunks and a partial one:
/// the update with the working copy (which starts one element into its array) against the
/// update, then convert.
template <typename T> void checkWorkingCopy() {
  const int64_t n = 3 * 16384 + 77;
  std::mt19937 generator(3);
  std::uniform_real_distribution<float> values(-2.0f, 2.0f);
  std::vector<float> master(n), grad(n);
  for (int64_t i = 0; i < n; ++i)
    master[i] = values(generator);
  std::vector<float> expectedMaster = master, m(n, 0.0f), v(n, 0.0f), expectedM = m, expectedV = v;
  std::vector<T> working(n + 2, fromFloat<T>(42.0f)), expectedWorking = working;
  for (int64_t step = 1; step <= 2; ++step) {
    for (float &g : grad)
      g = 0.1f * values(generator);
    const AdamWConfig config{1e-3, 0.9, 0.999, 1e-8, 0.01, step};
    adamwUpdate(expectedMaster.data(), grad.data(), expectedM.data(), expectedV.data(), n, config);
    convert(expectedMaster.data(), expectedWorking.data() + 1, n);
    adamwUpdate(master.data(), grad.data(), m.data(), v.data(), working.data() + 1, n, config);
  }
  EXPECT_TRUE(sameBits(master, expectedMaster));
  EXPECT_TRUE(sameBits(m, expectedM));
  EXPECT_TRUE(sameBits(v, expectedV));
  EXPECT_TRUE(sameBits(working, expectedWorking));
}

// The working copy gets the bits convert gives after the update, and its neighbours keep
// theirs.
TEST(AdamW, WorkingCopyGetsTheBitsOfConvertAfterTheUpdate) {
  checkWorkingCopy<bf16>();
  checkWorkingCopy<fp16>();
}

// Gradients [3, 4, 0, -12]: squared norm 9 + 16 + 144 = 169, norm 13.
TEST(GradientClipping, SquaredNormSumsSquares) {
  const std::vector<float> grad = {3.0f, 4.0f, 0.0f, -12.0f};
  EXPECT_FLOAT_EQ(squaredNorm(grad.data(), 4), 169.0f);
  EXPECT_FLOAT_EQ(squaredNorm(grad.data(), 0), 0.0f);
}

// max norm 6.5 against norm 13, in float as torch.nn.utils.clip_grad_norm_ computes it:
// 13 + 1e-6 is 13 + 2^-20 (the nearest float), and 6.5 / (13 + 2^-20) = 0.5 - 1.23 x 2^-25
// rounds to the coefficient 0.5 - 2^-25. So [3, 4, 0, -12] becomes
//   3 x (0.5 - 2^-25) = 1.5 - 0.75 x 2^-23   -> 1.5 - 2^-23 (floats in [1, 2) are 2^-23 apart)
//   4 x (0.5 - 2^-25) = 2 - 2^-23            (exact: one float below 2)
//   12 x (0.5 - 2^-25) = 6 - 0.75 x 2^-21    -> 6 - 2^-21 (floats in [4, 8) are 2^-21 apart)
// each one float below the 1.5, 2 and 6 a coefficient of 0.5 (no + 1e-6) gives.
TEST(GradientClipping, ScalesDownToTheMaximumNorm) {
  std::vector<float> grad = {3.0f, 4.0f, 0.0f, -12.0f};
  clipByGlobalNorm(grad.data(), 4, 169.0f, 6.5f);
  EXPECT_EQ(grad, (std::vector<float>{std::nextafter(1.5f, 0.0f), std::nextafter(2.0f, 0.0f), 0.0f,
                                      -std::nextafter(6.0f, 0.0f)}));
}

// A norm already within the maximum leaves the gradients exactly as they were (coefficient
// min(20 / 13.000001, 1) = 1).
TEST(GradientClipping, LeavesSmallGradientsUnchanged) {
  std::vector<float> grad = {3.0f, 4.0f, 0.0f, -12.0f};
  clipByGlobalNorm(grad.data(), 4, 169.0f, 20.0f);
  EXPECT_EQ(grad, (std::vector<float>{3.0f, 4.0f, 0.0f, -12.0f}));
}
