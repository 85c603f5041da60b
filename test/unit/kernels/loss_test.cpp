// Tests of the cross-entropy kernels: closed-form losses (uniform logits give ln C), stability
// on large logits, and the backward against finite differences with normalizer != batch.
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

// Uniform logits give every class probability 1/C, so each row's loss is ln C; three rows
// over a normalizer of 6 (two micro-batches of 3) give 3 ln(5) / 6.
TEST(CrossEntropy, UniformLogitsGiveLogClasses) {
  std::vector<float> logits(3 * 5, 0.7f);
  std::vector<int32_t> labels = {0, 4, 2};
  float loss = 0.0f;
  crossEntropyForward(logits.data(), labels.data(), &loss, 3, 5, 6.0f);
  EXPECT_NEAR(loss, 3.0 * std::log(5.0) / 6.0, 1e-6);
}

// logits [1, 2, 3], label 2: ln(e + e^2 + e^3) - 3 = ln(1 + e^-1 + e^-2) = 0.40760596444;
// logits [0, 0, ln 3], label 0: ln(1 + 1 + 3) - 0 = ln 5 = 1.6094379124.
TEST(CrossEntropy, ForwardMatchesHandComputedRows) {
  std::vector<float> logits = {1, 2, 3, 0, 0, float(std::log(3.0))};
  std::vector<int32_t> labels = {2, 0};
  float loss = 0.0f;
  crossEntropyForward(logits.data(), labels.data(), &loss, 2, 3, 2.0f);
  EXPECT_NEAR(loss, (0.40760596444 + 1.6094379124) / 2.0, 1e-6);
}

// A naive exp would overflow at 1000; the stable form gives -log softmax = 1000 exactly.
TEST(CrossEntropy, StableOnLargeLogits) {
  std::vector<float> logits = {1000.0f, 0.0f};
  std::vector<int32_t> labels = {1};
  std::vector<float> dlogits(2);
  float loss = 0.0f, dloss = 1.0f;
  crossEntropyForward(logits.data(), labels.data(), &loss, 1, 2, 1.0f);
  crossEntropyBackward(&dloss, logits.data(), labels.data(), dlogits.data(), 1, 2, 1.0f);
  EXPECT_EQ(loss, 1000.0f);
  EXPECT_EQ(dlogits, (std::vector<float>{1.0f, -1.0f}));
}

TEST(CrossEntropy, BackwardMatchesFiniteDifferences) {
  const int64_t batch = 3, classes = 4;
  const float normalizer = 8.0f, dloss = 1.7f;
  std::vector<float> logits = randomTensor(batch * classes, 50, -3.0f, 3.0f);
  std::vector<int32_t> labels = {3, 0, 3};
  std::vector<float> dlogits(batch * classes);
  crossEntropyBackward(&dloss, logits.data(), labels.data(), dlogits.data(), batch, classes,
                       normalizer);
  auto forward = [&] {
    std::vector<float> loss(1);
    crossEntropyForward(logits.data(), labels.data(), loss.data(), batch, classes, normalizer);
    return loss;
  };
  // The loss is a scalar, so the projection is the incoming gradient dloss itself. The
  // gradients are O(1/normalizer), hence the tighter absolute tolerance.
  expectGradientNear(dlogits, numericGradient(logits, {dloss}, forward), "dlogits", 1e-4);
}
