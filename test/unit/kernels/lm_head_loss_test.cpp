// Tests of the LM head loss's CPU kernels (lm_head_loss.cpp) against a naive reference that
// materializes every logit in double: the loss and both gradients at chunk sizes that divide
// the tokens, that do not, that take them all at once and that exceed them, with ignored
// labels (-100 and one past the vocabulary); the weight gradient overwritten, accumulated
// and skipped; the gradients against finite differences of the forward; 16-bit storage.
#include "bertc/abi/lm_head_loss.h"
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace bertc;
using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::randomTensor;

namespace {

constexpr int64_t kTokens = 10, kWidth = 6, kVocab = 13;

/// Labels with two ignored tokens: -100 and kVocab (outside [0, vocab)).
std::vector<int32_t> labels() { return {3, -100, 0, 12, 7, kVocab, 5, 5, 1, 9}; }

/// The loss and gradients with the logits materialized, in double.
struct Reference {
  double loss = 0;
  std::vector<double> dhidden, dweight;
};

Reference naive(const std::vector<float> &hidden, const std::vector<float> &weight,
                const std::vector<int32_t> &labels, double dloss, double normalizer) {
  Reference ref;
  ref.dhidden.assign(hidden.size(), 0.0);
  ref.dweight.assign(weight.size(), 0.0);
  for (int64_t t = 0; t < kTokens; ++t) {
    if (labels[t] < 0 || labels[t] >= kVocab)
      continue;
    std::vector<double> logits(kVocab);
    for (int64_t v = 0; v < kVocab; ++v)
      for (int64_t h = 0; h < kWidth; ++h)
        logits[v] += double(hidden[t * kWidth + h]) * double(weight[v * kWidth + h]);
    double sum = 0;
    for (double logit : logits)
      sum += std::exp(logit);
    ref.loss += (std::log(sum) - logits[labels[t]]) / normalizer;
    for (int64_t v = 0; v < kVocab; ++v) {
      double g = (std::exp(logits[v]) / sum - (v == labels[t] ? 1.0 : 0.0)) * dloss / normalizer;
      for (int64_t h = 0; h < kWidth; ++h) {
        ref.dhidden[t * kWidth + h] += g * weight[v * kWidth + h];
        ref.dweight[v * kWidth + h] += g * hidden[t * kWidth + h];
      }
    }
  }
  return ref;
}

void expectNear(const std::vector<float> &actual, const std::vector<double> &expected,
                double tolerance, const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tolerance + tolerance * std::fabs(expected[i]))
        << what << " [" << i << "]";
}

/// Workspace floats of the forward (which the backward's need not exceed).
std::vector<float> workspace(int64_t chunk) {
  return std::vector<float>(
      size_t(lmHeadLossForwardWorkspaceBytes(chunk, kVocab, kTokens) / int64_t(sizeof(float))),
      -7.0f);
}

} // namespace

class LmHeadLossChunks : public ::testing::TestWithParam<int64_t> {};

// 1, 3 and 4 tokens at a time (3 and 4 leave a short last chunk), all 10, and 16 (more than
// the tokens) give the reference's loss and gradients.
TEST_P(LmHeadLossChunks, MatchesTheMaterializedLogits) {
  const int64_t chunk = GetParam();
  std::vector<float> hidden = randomTensor(kTokens * kWidth, 1, -2, 2);
  std::vector<float> weight = randomTensor(kVocab * kWidth, 2, -1, 1);
  const float normalizer = 8.0f, dloss = 1.5f; // the 8 labelled tokens; a loss scale
  const Reference ref = naive(hidden, weight, labels(), dloss, normalizer);
  std::vector<float> scratch = workspace(chunk);
  float loss = 0;
  lmHeadLossForward(hidden.data(), weight.data(), labels().data(), &loss, scratch.data(), kTokens,
                    kWidth, kVocab, chunk, normalizer);
  EXPECT_NEAR(loss, ref.loss, 1e-5 * ref.loss);

  std::vector<float> dhidden(hidden.size(), 99.0f), dweight(weight.size(), 99.0f);
  lmHeadLossBackward(&dloss, hidden.data(), weight.data(), labels().data(), dhidden.data(),
                     dweight.data(), scratch.data(), kTokens, kWidth, kVocab, chunk, normalizer);
  expectNear(dhidden, ref.dhidden, 1e-5, "dhidden");
  expectNear(dweight, ref.dweight, 1e-5, "dweight");
  // The ignored tokens' hidden states get no gradient.
  for (int64_t t : {1, 5})
    for (int64_t h = 0; h < kWidth; ++h)
      EXPECT_EQ(dhidden[t * kWidth + h], 0.0f) << "token " << t;

  // Into a slot holding ones; without a weight gradient, dhidden alone.
  std::vector<float> slot(weight.size(), 1.0f), dhiddenAgain(hidden.size());
  lmHeadLossBackwardAccumulate(&dloss, hidden.data(), weight.data(), labels().data(),
                               dhiddenAgain.data(), slot.data(), scratch.data(), kTokens, kWidth,
                               kVocab, chunk, normalizer);
  for (size_t i = 0; i < slot.size(); ++i)
    EXPECT_NEAR(slot[i], 1.0f + dweight[i], 1e-6) << i;
  EXPECT_EQ(dhiddenAgain, dhidden);
  lmHeadLossBackward(&dloss, hidden.data(), weight.data(), labels().data(), dhiddenAgain.data(),
                     static_cast<float *>(nullptr), scratch.data(), kTokens, kWidth, kVocab, chunk,
                     normalizer);
  EXPECT_EQ(dhiddenAgain, dhidden);
}

INSTANTIATE_TEST_SUITE_P(Chunks, LmHeadLossChunks, ::testing::Values(1, 3, 4, 10, 16));

// d loss / d hidden and d weight by central differences of the forward (L = loss * r with a
// random r: the backward is fed dloss = r).
TEST(LmHeadLoss, GradientsMatchFiniteDifferences) {
  std::vector<float> hidden = randomTensor(kTokens * kWidth, 3, -2, 2);
  std::vector<float> weight = randomTensor(kVocab * kWidth, 4, -1, 1);
  const std::vector<float> projection = {0.75f};
  const int64_t chunk = 4;
  std::vector<float> scratch = workspace(chunk);
  auto forward = [&] {
    std::vector<float> loss(1);
    lmHeadLossForward(hidden.data(), weight.data(), labels().data(), loss.data(), scratch.data(),
                      kTokens, kWidth, kVocab, chunk, 8.0f);
    return loss;
  };
  std::vector<float> dhidden(hidden.size()), dweight(weight.size());
  lmHeadLossBackward(projection.data(), hidden.data(), weight.data(), labels().data(),
                     dhidden.data(), dweight.data(), scratch.data(), kTokens, kWidth, kVocab, chunk,
                     8.0f);
  expectGradientNear(dhidden, bertc::test::numericGradient(hidden, projection, forward), "dhidden");
  expectGradientNear(dweight, bertc::test::numericGradient(weight, projection, forward), "dweight");
}

// Labels that are all ignored: the loss is 0, both gradients 0 (the overwritten weight
// gradient too); no tokens at all likewise.
TEST(LmHeadLoss, IgnoredTokensAddNothing) {
  std::vector<float> hidden = randomTensor(kTokens * kWidth, 5),
                     weight = randomTensor(kVocab * kWidth, 6);
  const std::vector<int32_t> ignored(kTokens, -100);
  std::vector<float> scratch = workspace(3), dhidden(hidden.size(), 9.0f),
                     dweight(weight.size(), 9.0f);
  float loss = 9.0f, dloss = 1.0f;
  lmHeadLossForward(hidden.data(), weight.data(), ignored.data(), &loss, scratch.data(), kTokens,
                    kWidth, kVocab, 3, 1.0f);
  EXPECT_EQ(loss, 0.0f);
  lmHeadLossBackward(&dloss, hidden.data(), weight.data(), ignored.data(), dhidden.data(),
                     dweight.data(), scratch.data(), kTokens, kWidth, kVocab, 3, 1.0f);
  EXPECT_EQ(dhidden, std::vector<float>(hidden.size(), 0.0f));
  EXPECT_EQ(dweight, std::vector<float>(weight.size(), 0.0f));
  std::fill(dweight.begin(), dweight.end(), 9.0f);
  lmHeadLossForward(hidden.data(), weight.data(), ignored.data(), &loss, scratch.data(), 0, kWidth,
                    kVocab, 3, 1.0f);
  EXPECT_EQ(loss, 0.0f);
  lmHeadLossBackward(&dloss, hidden.data(), weight.data(), ignored.data(), dhidden.data(),
                     dweight.data(), scratch.data(), 0, kWidth, kVocab, 3, 1.0f);
  EXPECT_EQ(dweight, std::vector<float>(weight.size(), 0.0f));
}

// bf16 and fp16 storage: the reference on the stored (rounded) inputs; the loss in fp32
// exactly so (to fp32 rounding), the gradients within the 16-bit rounding of dlogits and
// dhidden.
template <typename T> class LmHeadLossStorage : public ::testing::Test {};
using HalfTypes = ::testing::Types<bf16, fp16>;
TYPED_TEST_SUITE(LmHeadLossStorage, HalfTypes);

TYPED_TEST(LmHeadLossStorage, MatchesTheReferenceOnStoredInputs) {
  using T = TypeParam;
  std::vector<float> hidden = randomTensor(kTokens * kWidth, 7, -2, 2);
  std::vector<float> weight = randomTensor(kVocab * kWidth, 8, -1, 1);
  std::vector<T> hiddenT(hidden.size()), weightT(weight.size());
  for (size_t i = 0; i < hidden.size(); ++i)
    hidden[i] = toFloat(hiddenT[i] = fromFloat<T>(hidden[i]));
  for (size_t i = 0; i < weight.size(); ++i)
    weight[i] = toFloat(weightT[i] = fromFloat<T>(weight[i]));
  const Reference ref = naive(hidden, weight, labels(), 1.0, 8.0);
  std::vector<float> scratch = workspace(3);
  float loss = 0, dloss = 1.0f;
  lmHeadLossForward(hiddenT.data(), weightT.data(), labels().data(), &loss, scratch.data(), kTokens,
                    kWidth, kVocab, 3, 8.0f);
  EXPECT_NEAR(loss, ref.loss, 1e-5 * ref.loss);
  std::vector<T> dhiddenT(hidden.size());
  std::vector<float> dweight(weight.size());
  lmHeadLossBackward(&dloss, hiddenT.data(), weightT.data(), labels().data(), dhiddenT.data(),
                     dweight.data(), scratch.data(), kTokens, kWidth, kVocab, 3, 8.0f);
  std::vector<float> dhidden(hidden.size());
  for (size_t i = 0; i < dhidden.size(); ++i)
    dhidden[i] = toFloat(dhiddenT[i]);
  expectNear(dhidden, ref.dhidden, 1e-2, "dhidden");
  expectNear(dweight, ref.dweight, 1e-2, "dweight");
}
