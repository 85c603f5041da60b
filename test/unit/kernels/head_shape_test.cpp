// Tests of the heads' pooling and layout kernels: selectToken, meanTokens, maxTokens,
// flatten, and the slices and concatenations of the last dimension. Forwards against values
// by hand, backwards against finite differences of their forwards.
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

TEST(SelectToken, ForwardCopiesTheIndexedToken) {
  const int64_t batch = 2, seq = 3, hidden = 2;
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}, out(4);
  selectTokenForward(x.data(), out.data(), batch, seq, hidden, 1);
  EXPECT_EQ(out, (std::vector<float>{2, 3, 12, 13}));
}

TEST(MeanTokens, ForwardAveragesTheRealTokensByHand) {
  // Row 0 has tokens 0 and 2 real: (0 + 4) / 2, (1 + 5) / 2; row 1 none: zeros; row 2 all
  // three: (20 + 22 + 24) / 3, (21 + 23 + 25) / 3.
  const int64_t batch = 3, seq = 3, hidden = 2;
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25};
  std::vector<int32_t> mask = {1, 0, 1, 0, 0, 0, 1, 1, 1};
  std::vector<float> out(batch * hidden);
  meanTokensForward(x.data(), mask.data(), out.data(), batch, seq, hidden);
  EXPECT_EQ(out, (std::vector<float>{2, 3, 0, 0, 22, 23}));
}

TEST(MeanTokens, BackwardMatchesFiniteDifferencesAndSkipsPadding) {
  const int64_t batch = 2, seq = 4, hidden = 3;
  std::vector<int32_t> mask = {1, 1, 1, 0, 1, 0, 0, 0};
  std::vector<float> x = randomTensor(batch * seq * hidden, 12);
  std::vector<float> dy = randomTensor(batch * hidden, 13), dx(batch * seq * hidden, 99.0f);
  meanTokensBackward(dy.data(), mask.data(), dx.data(), batch, seq, hidden);
  auto forward = [&] {
    std::vector<float> out(batch * hidden);
    meanTokensForward(x.data(), mask.data(), out.data(), batch, seq, hidden);
    return out;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
  for (int64_t c = 0; c < hidden; ++c) {
    EXPECT_EQ(dx[(0 * seq + 3) * hidden + c], 0.0f) << "padding gets no gradient";
    EXPECT_EQ(dx[(1 * seq + 0) * hidden + c], dy[1 * hidden + c]) << "a row of one token";
  }
}

TEST(SelectToken, BackwardMatchesFiniteDifferencesAndZeroesOtherTokens) {
  const int64_t batch = 2, seq = 3, hidden = 4, index = 2;
  std::vector<float> x = randomTensor(batch * seq * hidden, 10);
  std::vector<float> dy = randomTensor(batch * hidden, 11);
  std::vector<float> dx(batch * seq * hidden, 99.0f);
  selectTokenBackward(dy.data(), dx.data(), batch, seq, hidden, index);
  auto forward = [&] {
    std::vector<float> out(batch * hidden);
    selectTokenForward(x.data(), out.data(), batch, seq, hidden, index);
    return out;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t c = 0; c < hidden; ++c)
        EXPECT_EQ(dx[(b * seq + t) * hidden + c], t == index ? dy[b * hidden + c] : 0.0f);
}

TEST(Flatten, ForwardLaysTokensEndToEndAndZeroPads) {
  // Two rows of 2 tokens x 2 features, padded to 3 tokens: 6 values per row.
  const int64_t batch = 2, seq = 2, paddedSeq = 3, hidden = 2;
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, out(batch * paddedSeq * hidden, 99.0f);
  flattenForward(x.data(), out.data(), batch, seq, paddedSeq, hidden);
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 0, 0, 5, 6, 7, 8, 0, 0}));
}

TEST(Flatten, BackwardMatchesFiniteDifferences) {
  const int64_t batch = 2, seq = 3, paddedSeq = 5, hidden = 4;
  std::vector<float> x = randomTensor(batch * seq * hidden, 12);
  std::vector<float> dy = randomTensor(batch * paddedSeq * hidden, 13);
  std::vector<float> dx(batch * seq * hidden, 99.0f);
  flattenBackward(dy.data(), dx.data(), batch, seq, paddedSeq, hidden);
  auto forward = [&] {
    std::vector<float> out(batch * paddedSeq * hidden);
    flattenForward(x.data(), out.data(), batch, seq, paddedSeq, hidden);
    return out;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
}

TEST(MaxTokens, ForwardTakesTheLargestRealTokenByHand) {
  // Row 0: tokens 0 and 2 real, padding (token 1) holds the largest values but takes no part;
  // row 1 none: zeros; row 2: all three, a NaN at token 1 of feature 1 gives NaN.
  const int64_t batch = 3, seq = 3, hidden = 2;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {0, 7, 50, 50, 4, -1, 10, 11, 12, 13, 14, 15, -3, -2, -5, nan, -4, 9};
  std::vector<int32_t> mask = {1, 0, 1, 0, 0, 0, 1, 1, 1};
  std::vector<float> out(batch * hidden, 99.0f);
  maxTokensForward(x.data(), mask.data(), out.data(), batch, seq, hidden);
  EXPECT_EQ(out[0], 4.0f);
  EXPECT_EQ(out[1], 7.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_EQ(out[4], -3.0f);
  EXPECT_TRUE(std::isnan(out[5])) << "a NaN among the tokens is the maximum, as torch.max's";
}

TEST(MaxTokens, BackwardSendsEachGradientToItsMaximumsToken) {
  // Feature 0's maximum is token 2 of row 0, feature 1's token 0; a tie (row 1, feature 0:
  // tokens 0 and 1 hold 5) sends it to the first; padding and other tokens get zeros.
  const int64_t batch = 2, seq = 3, hidden = 2;
  std::vector<float> x = {1, 8, 2, 3, 6, 0, 5, 1, 5, 2, 9, 9};
  std::vector<int32_t> mask = {1, 1, 1, 1, 1, 0};
  std::vector<float> dy = {10, 20, 30, 40}, dx(batch * seq * hidden, 99.0f);
  maxTokensBackward(dy.data(), x.data(), mask.data(), dx.data(), batch, seq, hidden);
  EXPECT_EQ(dx, (std::vector<float>{0, 20, 0, 0, 10, 0, 30, 0, 0, 40, 0, 0}));
}

TEST(MaxTokens, BackwardMatchesFiniteDifferences) {
  const int64_t batch = 2, seq = 5, hidden = 4;
  std::vector<int32_t> mask = {1, 1, 1, 0, 0, 1, 1, 1, 1, 1};
  // 40 distinct values 1/41 apart (7919 is prime to 41), in a scrambled order: no two tokens
  // come within the finite differences' step of each other, so no maximum changes token.
  std::vector<float> x(batch * seq * hidden);
  for (size_t k = 0; k < x.size(); ++k)
    x[k] = float(k * 7919 % 41) / 41.0f - 0.5f;
  std::vector<float> dy = randomTensor(batch * hidden, 22), dx(batch * seq * hidden);
  maxTokensBackward(dy.data(), x.data(), mask.data(), dx.data(), batch, seq, hidden);
  auto forward = [&] {
    std::vector<float> out(batch * hidden);
    maxTokensForward(x.data(), mask.data(), out.data(), batch, seq, hidden);
    return out;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
}

TEST(Columns, SlicePlaceAndPadByHand) {
  // Two rows of 5 features; the slice keeps features [1, 4).
  const int64_t rows = 2;
  std::vector<float> x = {0, 1, 2, 3, 4, 10, 11, 12, 13, 14}, part(rows * 3, 99.0f);
  sliceColumns(x.data(), part.data(), rows, 5, 1, 3);
  EXPECT_EQ(part, (std::vector<float>{1, 2, 3, 11, 12, 13}));
  // Placed at features [2, 5) of rows of 6, the others untouched (a concatenation's input).
  std::vector<float> joined(rows * 6, 7.0f);
  placeColumns(part.data(), joined.data(), rows, 3, 6, 2);
  EXPECT_EQ(joined, (std::vector<float>{7, 7, 1, 2, 3, 7, 7, 7, 11, 12, 13, 7}));
  // Padded the same way, the others zero (a slice's gradient).
  padColumns(part.data(), joined.data(), rows, 3, 6, 2);
  EXPECT_EQ(joined, (std::vector<float>{0, 0, 1, 2, 3, 0, 0, 0, 11, 12, 13, 0}));
}

TEST(Columns, PadIsTheSlicesGradient) {
  const int64_t rows = 3, width = 7, start = 2, kept = 4;
  std::vector<float> x = randomTensor(rows * width, 23);
  std::vector<float> dy = randomTensor(rows * kept, 24), dx(rows * width, 99.0f);
  padColumns(dy.data(), dx.data(), rows, kept, width, start);
  auto forward = [&] {
    std::vector<float> out(rows * kept);
    sliceColumns(x.data(), out.data(), rows, width, start, kept);
    return out;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
}
