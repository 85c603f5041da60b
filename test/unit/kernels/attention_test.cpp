// Tests of the attention kernels: the forward's output and log-sum-exp against closed-form
// cases and a naive double-precision reference (padding mask and dropout included), the
// backward's dq, dk, dv (from the forward's output and lse) against finite differences, and
// the kernels' use of nothing but their scratch.
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

namespace {
constexpr bertc::DropoutKey kKey{77, 3, 11, 0};

/// One attention problem: q, k, v [batch, seq, hidden] and a key mask [batch, seq].
struct AttentionCase {
  int64_t batch, seq, hidden, heads;
  float dropoutRate;
  std::vector<float> q, k, v;
  std::vector<int32_t> mask;

  AttentionCase(int64_t batchSize, int64_t seqLen, int64_t hiddenSize, int64_t headCount,
                float rate, std::vector<int32_t> keyMask)
      : batch(batchSize), seq(seqLen), hidden(hiddenSize), heads(headCount), dropoutRate(rate),
        q(randomTensor(size(), 60)), k(randomTensor(size(), 61)), v(randomTensor(size(), 62)),
        mask(std::move(keyMask)) {}

  int64_t size() const { return batch * seq * hidden; }
  int64_t rows() const { return batch * heads * seq; }

  /// ctx, and lse [batch, heads, seq] when asked.
  std::vector<float> forward(std::vector<float> *lse = nullptr) const {
    std::vector<float> ctx(size()), scratch(attentionScratchFloats(seq)), rowLse(rows());
    attentionForward(q.data(), k.data(), v.data(), mask.data(), ctx.data(), rowLse.data(),
                     scratch.data(), batch, seq, hidden, heads, dropoutRate, kKey);
    if (lse)
      *lse = rowLse;
    return ctx;
  }

  /// Each query row's log-sum-exp of its masked scores in double, [batch, heads, seq].
  std::vector<double> referenceLse() const {
    const int64_t headDim = hidden / heads;
    std::vector<double> lse(rows());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < seq; ++i) {
          double sum = 0.0;
          for (int64_t j = 0; j < seq; ++j) {
            double dot = 0.0;
            for (int64_t c = 0; c < headDim; ++c)
              dot += double(q[(b * seq + i) * hidden + h * headDim + c]) *
                     k[(b * seq + j) * hidden + h * headDim + c];
            if (mask[b * seq + j] != 0)
              sum += std::exp(dot / std::sqrt(double(headDim)));
          }
          lse[(b * heads + h) * seq + i] = std::log(sum);
        }
    return lse;
  }

  /// ctx computed the textbook way in double: masked keys get weight exactly 0 (a row with
  /// every key masked averages all of them), then the documented dropout mask.
  std::vector<double> reference() const {
    const int64_t headDim = hidden / heads;
    std::vector<double> ctx(size(), 0.0), weights(seq);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < seq; ++i) {
          bool anyKey = false;
          for (int64_t j = 0; j < seq; ++j)
            anyKey |= mask[b * seq + j] != 0;
          double maxScore = -INFINITY, sum = 0.0;
          for (int64_t j = 0; j < seq; ++j) {
            double dot = 0.0;
            for (int64_t c = 0; c < headDim; ++c)
              dot += double(q[(b * seq + i) * hidden + h * headDim + c]) *
                     k[(b * seq + j) * hidden + h * headDim + c];
            weights[j] = dot / std::sqrt(double(headDim));
            if (anyKey && mask[b * seq + j] == 0)
              weights[j] = -INFINITY;
            maxScore = std::max(maxScore, weights[j]);
          }
          for (int64_t j = 0; j < seq; ++j)
            sum += weights[j] = std::exp(weights[j] - maxScore);
          for (int64_t j = 0; j < seq; ++j) {
            const uint64_t index = bertc::attentionDropoutIndex(h, i, j);
            const bool keep = bertc::dropoutKeep(kKey, b, index, dropoutRate);
            const double probability = keep ? weights[j] / sum / (1.0 - dropoutRate) : 0.0;
            for (int64_t c = 0; c < headDim; ++c)
              ctx[(b * seq + i) * hidden + h * headDim + c] +=
                  probability * v[(b * seq + j) * hidden + h * headDim + c];
          }
        }
    return ctx;
  }
};

void expectMatchesReference(const AttentionCase &problem) {
  const std::vector<float> ctx = problem.forward();
  const std::vector<double> expected = problem.reference();
  for (int64_t i = 0; i < problem.size(); ++i)
    EXPECT_NEAR(ctx[i], expected[i], 1e-5) << "ctx[" << i << "]";
}

void expectBackwardMatchesFiniteDifferences(AttentionCase problem) {
  const int64_t n = problem.size();
  const std::vector<float> dctx = randomTensor(n, 63);
  std::vector<float> dq(n, 99.0f), dk(n, 99.0f), dv(n, 99.0f);
  std::vector<float> scratch(attentionScratchFloats(problem.seq)), lse;
  const std::vector<float> ctx = problem.forward(&lse);
  attentionBackward(dctx.data(), problem.q.data(), problem.k.data(), problem.v.data(),
                    problem.mask.data(), ctx.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                    scratch.data(), problem.batch, problem.seq, problem.hidden, problem.heads,
                    problem.dropoutRate, kKey);
  auto forward = [&] { return problem.forward(); };
  expectGradientNear(dq, numericGradient(problem.q, dctx, forward), "dq");
  expectGradientNear(dk, numericGradient(problem.k, dctx, forward), "dk");
  expectGradientNear(dv, numericGradient(problem.v, dctx, forward), "dv");
}

/// Sequence 1 keeps every key; sequence 0 pads its last key and masks one in the middle.
const std::vector<int32_t> kPaddingMask = {1, 0, 1, 0, 1, 1, 1, 1};
} // namespace

TEST(Attention, SingleKeyContextIsThatValue) {
  AttentionCase problem(2, 1, 4, 2, 0.0f, {1, 1});
  EXPECT_EQ(problem.forward(), problem.v);
}

// With one unmasked key every query gives that key's probability 1, so ctx = its value row.
TEST(Attention, OneUnmaskedKeyContextIsItsValue) {
  AttentionCase problem(1, 3, 4, 2, 0.0f, {0, 1, 0});
  const std::vector<float> ctx = problem.forward();
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t c = 0; c < 4; ++c)
      EXPECT_FLOAT_EQ(ctx[i * 4 + c], problem.v[1 * 4 + c]) << i << "," << c;
}

// As in Hugging Face BERT (scores + finfo.min), a row with every key masked is uniform.
TEST(Attention, AllKeysMaskedAveragesValues) {
  AttentionCase problem(1, 3, 2, 1, 0.0f, {0, 0, 0});
  const std::vector<float> ctx = problem.forward();
  for (int64_t c = 0; c < 2; ++c) {
    const double mean = (double(problem.v[c]) + problem.v[2 + c] + problem.v[4 + c]) / 3.0;
    EXPECT_NEAR(ctx[c], mean, 1e-6);
  }
}

// Every row of the padding case has a visible key: lse = log sum over the visible keys of
// exp(score), whatever the dropout (which acts after the softmax).
TEST(Attention, ForwardSavesEachRowsLogSumExp) {
  for (float rate : {0.0f, 0.3f}) {
    AttentionCase problem(2, 4, 6, 2, rate, kPaddingMask);
    std::vector<float> lse;
    problem.forward(&lse);
    const std::vector<double> expected = problem.referenceLse();
    for (int64_t r = 0; r < problem.rows(); ++r)
      EXPECT_NEAR(lse[r], expected[r], 1e-5) << "lse[" << r << "] dropout " << rate;
  }
}

// One visible key with score 0 (its q row is zero) gives lse = log exp(0) = 0; a row with
// every key masked gives -FLT_MAX (-FLT_MAX + log 3 rounds back to it).
TEST(Attention, LogSumExpOfOneKeyAndOfNoKey) {
  AttentionCase one(1, 3, 2, 1, 0.0f, {0, 1, 0});
  std::fill(one.q.begin(), one.q.end(), 0.0f);
  std::vector<float> lse;
  one.forward(&lse);
  EXPECT_EQ(lse, std::vector<float>(3, 0.0f));
  AttentionCase none(1, 3, 2, 1, 0.0f, {0, 0, 0});
  none.forward(&lse);
  EXPECT_EQ(lse, std::vector<float>(3, -FLT_MAX));
}

// The backward of a row with every key masked uses its uniform probabilities: dv_j is the
// mean of the rows' dctx, 1/3 of their sum, for every key j.
TEST(Attention, BackwardOfAllKeysMaskedSpreadsEvenly) {
  AttentionCase problem(1, 3, 2, 1, 0.0f, {0, 0, 0});
  std::vector<float> lse, scratch(attentionScratchFloats(3)), dq(6), dk(6), dv(6);
  const std::vector<float> ctx = problem.forward(&lse);
  const std::vector<float> dctx = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  attentionBackward(dctx.data(), problem.q.data(), problem.k.data(), problem.v.data(),
                    problem.mask.data(), ctx.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                    scratch.data(), 1, 3, 2, 1, 0.0f, kKey);
  for (int64_t j = 0; j < 3; ++j) {
    EXPECT_NEAR(dv[j * 2], (1.0 + 3.0 + 5.0) / 3.0, 1e-6) << j;
    EXPECT_NEAR(dv[j * 2 + 1], (2.0 + 4.0 + 6.0) / 3.0, 1e-6) << j;
  }
}

TEST(Attention, ForwardMatchesNaiveReference) {
  expectMatchesReference(AttentionCase(2, 4, 6, 2, 0.0f, kPaddingMask));
}

TEST(Attention, ForwardWithDropoutMatchesNaiveReference) {
  expectMatchesReference(AttentionCase(2, 4, 6, 2, 0.3f, kPaddingMask));
}

TEST(Attention, MaskedKeysAndValuesDoNotChangeContext) {
  for (float rate : {0.0f, 0.3f}) {
    AttentionCase problem(2, 4, 6, 2, rate, kPaddingMask);
    const std::vector<float> before = problem.forward();
    for (int64_t j : {1, 3}) // the masked keys of sequence 0
      for (int64_t c = 0; c < problem.hidden; ++c) {
        problem.k[j * problem.hidden + c] += 5.0f;
        problem.v[j * problem.hidden + c] -= 7.0f;
      }
    EXPECT_EQ(problem.forward(), before) << "dropout " << rate;
  }
}

// A micro-batch is padded to its longest row: a row of 5 tokens padded to 8 (3 masked keys)
// gets the same context in its 5 rows, dropout masks included, so the masks of a row do not
// depend on the rows it shares a micro-batch with.
TEST(Attention, PaddingASequenceChangesNeitherItsContextNorItsDropout) {
  constexpr int64_t kTokens = 5, kPadded = 8, kHidden = 6;
  AttentionCase exact(1, kTokens, kHidden, 2, 0.3f, std::vector<int32_t>(kTokens, 1));
  std::vector<int32_t> paddedMask(kPadded, 0);
  std::fill_n(paddedMask.begin(), kTokens, 1);
  AttentionCase padded(1, kPadded, kHidden, 2, 0.3f, paddedMask);
  for (std::vector<float> *tensor : {&padded.q, &padded.k, &padded.v})
    std::fill(tensor->begin() + kTokens * kHidden, tensor->end(), 9.0f);
  std::copy(exact.q.begin(), exact.q.end(), padded.q.begin());
  std::copy(exact.k.begin(), exact.k.end(), padded.k.begin());
  std::copy(exact.v.begin(), exact.v.end(), padded.v.begin());
  const std::vector<float> alone = exact.forward(), inPadding = padded.forward();
  for (int64_t e = 0; e < kTokens * kHidden; ++e)
    EXPECT_NEAR(inPadding[e], alone[e], 1e-6) << "token " << e / kHidden;
}

TEST(Attention, BackwardMatchesFiniteDifferences) {
  expectBackwardMatchesFiniteDifferences(AttentionCase(2, 4, 6, 2, 0.0f, kPaddingMask));
}

TEST(Attention, BackwardWithDropoutMatchesFiniteDifferences) {
  expectBackwardMatchesFiniteDifferences(AttentionCase(2, 4, 6, 2, 0.3f, kPaddingMask));
}

// The kernels may use attentionScratchFloats(seq) floats of scratch and not one more: a
// guard band after them must come back untouched.
TEST(Attention, WritesNothingPastItsScratch) {
  AttentionCase problem(2, 4, 6, 2, 0.3f, kPaddingMask);
  const int64_t n = problem.size(), scratchFloats = attentionScratchFloats(problem.seq);
  const float guard = -12345.0f;
  std::vector<float> scratch(scratchFloats + 64, guard);
  std::vector<float> ctx(n), dq(n), dk(n), dv(n), lse(problem.rows());
  attentionForward(problem.q.data(), problem.k.data(), problem.v.data(), problem.mask.data(),
                   ctx.data(), lse.data(), scratch.data(), 2, 4, 6, 2, 0.3f, kKey);
  attentionBackward(ctx.data(), problem.q.data(), problem.k.data(), problem.v.data(),
                    problem.mask.data(), ctx.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                    scratch.data(), 2, 4, 6, 2, 0.3f, kKey);
  for (int64_t i = scratchFloats; i < int64_t(scratch.size()); ++i)
    EXPECT_EQ(scratch[i], guard) << "scratch[" << i << "]";
}
