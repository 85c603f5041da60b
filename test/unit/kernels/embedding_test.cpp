// Tests of the embedding kernels: the forward gathers rows, the backward scatter-adds them,
// summing the gradients of repeated ids and zeroing rows no token used (or, accumulating,
// keeping them as the gradient slot had them), the padding row left alone.
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

TEST(Embedding, ForwardGathersRows) {
  std::vector<float> table = {0, 1, 10, 11, 20, 21}; // vocab 3, hidden 2
  std::vector<int32_t> ids = {2, 0, 2};
  std::vector<float> out(6);
  embeddingForward(ids.data(), table.data(), out.data(), 3, 2);
  EXPECT_EQ(out, (std::vector<float>{20, 21, 0, 1, 20, 21}));
}

TEST(Embedding, BackwardSumsRepeatedIdsAndZeroesUnusedRows) {
  std::vector<int32_t> ids = {2, 0, 2};
  std::vector<float> dout = {1, 2, 3, 4, 5, 6};
  std::vector<float> dtable(8, 99.0f); // vocab 4, hidden 2: row 1 and 3 unused
  embeddingBackward(ids.data(), dout.data(), dtable.data(), 3, 4, 2, -1);
  EXPECT_EQ(dtable, (std::vector<float>{3, 4, 0, 0, 1 + 5, 2 + 6, 0, 0}));
}

TEST(Embedding, BackwardAccumulateAddsRowsIntoTheSlotInTokenOrder) {
  std::vector<int32_t> ids = {2, 0, 2};
  std::vector<float> dout = {1, 2, 3, 4, 5, 6};
  std::vector<float> slot = {10, 20, 30, 40, 50, 60, 70, 80}; // vocab 4: rows 1 and 3 kept
  embeddingBackwardAccumulate(ids.data(), dout.data(), slot.data(), 3, 4, 2, -1);
  EXPECT_EQ(slot, (std::vector<float>{13, 24, 30, 40, 50 + 1 + 5, 60 + 2 + 6, 70, 80}));

  // 2^24 + 1 + 1: added one by one in token order each 1 rounds away; summed first, 2 stays.
  std::vector<float> big = {16777216.0f};
  std::vector<float> ones = {1, 1};
  std::vector<int32_t> sameId = {0, 0};
  embeddingBackwardAccumulate(sameId.data(), ones.data(), big.data(), 2, 1, 1, -1);
  EXPECT_EQ(big[0], 16777216.0f);
}

TEST(Embedding, BackwardLeavesThePaddingRowAlone) {
  std::vector<int32_t> ids = {2, 0, 2, 0}; // id 0 pads
  std::vector<float> dout = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> dtable(6, 99.0f); // vocab 3, hidden 2
  embeddingBackward(ids.data(), dout.data(), dtable.data(), 4, 3, 2, /*paddingIdx=*/0);
  EXPECT_EQ(dtable, (std::vector<float>{0, 0, 0, 0, 1 + 5, 2 + 6}));

  std::vector<float> slot = {10, 20, 30, 40, 50, 60};
  embeddingBackwardAccumulate(ids.data(), dout.data(), slot.data(), 4, 3, 2, /*paddingIdx=*/0);
  EXPECT_EQ(slot, (std::vector<float>{10, 20, 30, 40, 50 + 1 + 5, 60 + 2 + 6}));
}

TEST(Embedding, BackwardMatchesFiniteDifferences) {
  const int64_t vocab = 5, hidden = 3, tokens = 7;
  std::vector<int32_t> ids = {1, 4, 1, 0, 1, 4, 2}; // 1 three times, 4 twice, 3 never
  std::vector<float> table = randomTensor(vocab * hidden, 20);
  std::vector<float> dout = randomTensor(tokens * hidden, 21);
  std::vector<float> dtable(vocab * hidden);
  embeddingBackward(ids.data(), dout.data(), dtable.data(), tokens, vocab, hidden, -1);
  auto forward = [&] {
    std::vector<float> out(tokens * hidden);
    embeddingForward(ids.data(), table.data(), out.data(), tokens, hidden);
    return out;
  };
  expectGradientNear(dtable, numericGradient(table, dout, forward), "dtable");
}
