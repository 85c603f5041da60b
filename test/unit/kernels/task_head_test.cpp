// Tests of the task-head kernels: cross-entropy's ignored rows (token classification's -100,
// clamped span positions), the span loss layout (transpose), and the regression MSE, each
// forward against hand-computed values and each backward against finite differences.
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

// Rows labelled -100 or past the classes add nothing: rows 0 and 2 alone give
// ln(1 + e^-1 + e^-2) (logits [1, 2, 3], label 2) + ln 3 (uniform, label 1), over 4.
TEST(CrossEntropyIgnore, IgnoredRowsAddNothing) {
  std::vector<float> logits = {1, 2, 3, 9, -4, 0, 0.5f, 0.5f, 0.5f, 7, 7, -7};
  std::vector<int32_t> labels = {2, -100, 1, 3};
  float loss = 0.0f;
  crossEntropyForward(logits.data(), labels.data(), &loss, 4, 3, 4.0f);
  EXPECT_NEAR(loss, (0.40760596444 + std::log(3.0)) / 4.0, 1e-6);
}

TEST(CrossEntropyIgnore, IgnoredRowsGetZeroGradient) {
  const int64_t rows = 4, classes = 3;
  const float normalizer = 2.0f, dloss = 0.8f;
  std::vector<float> logits = randomTensor(rows * classes, 7, -2.0f, 2.0f);
  std::vector<int32_t> labels = {-100, 0, 3, 2};
  std::vector<float> dlogits(rows * classes, 42.0f);
  crossEntropyBackward(&dloss, logits.data(), labels.data(), dlogits.data(), rows, classes,
                       normalizer);
  for (int64_t c = 0; c < classes; ++c) {
    EXPECT_EQ(dlogits[0 * classes + c], 0.0f);
    EXPECT_EQ(dlogits[2 * classes + c], 0.0f);
  }
  auto forward = [&] {
    std::vector<float> loss(1);
    crossEntropyForward(logits.data(), labels.data(), loss.data(), rows, classes, normalizer);
    return loss;
  };
  expectGradientNear(dlogits, numericGradient(logits, {dloss}, forward), "dlogits", 1e-4);
}

// [2, 3] per row becomes [3, 2]: x = [[0 1 2] [3 4 5]] -> [[0 3] [1 4] [2 5]].
TEST(Transpose, SwapsTheLastTwoDimensions) {
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15};
  std::vector<float> y(12);
  transposeLastTwo(x.data(), y.data(), 2, 2, 3);
  EXPECT_EQ(y, (std::vector<float>{0, 3, 1, 4, 2, 5, 10, 13, 11, 14, 12, 15}));
  std::vector<float> back(12);
  transposeLastTwo(y.data(), back.data(), 2, 3, 2);
  EXPECT_EQ(back, x);
}

// The span loss as the graph builds it: [seq, 2] logits transposed to a start row and an
// end row, cross-entropy over positions with scale 1/2 (a normalizer of 2 * rows). One row
// of seq 3, start logits [0, ln 2, 0] (label 1: -ln(2/4) = ln 2) and end logits all 0
// (label 2: ln 3): (ln 2 + ln 3) / 2.
TEST(SpanLoss, IsTheMeanOfStartAndEndCrossEntropy) {
  std::vector<float> perToken = {0, 0, float(std::log(2.0)), 0, 0, 0}; // [seq 3, 2]
  std::vector<float> startsEnds(6);
  transposeLastTwo(perToken.data(), startsEnds.data(), 1, 3, 2);
  std::vector<int32_t> positions = {1, 2};
  float loss = 0.0f;
  crossEntropyForward(startsEnds.data(), positions.data(), &loss, 2, 3, 1.0f / 0.5f);
  EXPECT_NEAR(loss, (std::log(2.0) + std::log(3.0)) / 2.0, 1e-6);
}

// (1.5 - 0.5)^2 + (-1 - 1)^2 + (2 - 2)^2 = 5, over a normalizer of 4.
TEST(MseLoss, ForwardMatchesHandComputedRows) {
  std::vector<float> predictions = {1.5f, -1.0f, 2.0f}, targets = {0.5f, 1.0f, 2.0f};
  float loss = 0.0f;
  mseLossForward(predictions.data(), targets.data(), &loss, 3, 4.0f);
  EXPECT_NEAR(loss, 5.0 / 4.0, 1e-7);
}

// d/dp of (p - t)^2 / n is 2 (p - t) / n: [2 * 1 / 4, 2 * -2 / 4, 0] times dloss 3.
TEST(MseLoss, BackwardMatchesClosedFormAndFiniteDifferences) {
  std::vector<float> predictions = {1.5f, -1.0f, 2.0f}, targets = {0.5f, 1.0f, 2.0f};
  std::vector<float> dpredictions(3);
  const float dloss = 3.0f;
  mseLossBackward(&dloss, predictions.data(), targets.data(), dpredictions.data(), 3, 4.0f);
  EXPECT_NEAR(dpredictions[0], 1.5f, 1e-6);
  EXPECT_NEAR(dpredictions[1], -3.0f, 1e-6);
  EXPECT_EQ(dpredictions[2], 0.0f);

  std::vector<float> random = randomTensor(5, 11, -2.0f, 2.0f);
  std::vector<float> randomTargets = randomTensor(5, 12, -2.0f, 2.0f);
  std::vector<float> analytic(5);
  mseLossBackward(&dloss, random.data(), randomTargets.data(), analytic.data(), 5, 5.0f);
  auto forward = [&] {
    std::vector<float> loss(1);
    mseLossForward(random.data(), randomTargets.data(), loss.data(), 5, 5.0f);
    return loss;
  };
  expectGradientNear(analytic, numericGradient(random, {dloss}, forward), "dpredictions");
}
