// The counter-based generator behind dropout (counter_rng.h): Philox4x32-10 gives the
// reference outputs, and a dropout mask takes all four words of each call, one per element
// of a group of four, as four separate draws.
#include "bertc/runtime/counter_rng.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>

namespace {

using bertc::PhiloxBlock;

std::array<uint32_t, 4> words(const PhiloxBlock &block) {
  return {block.words[0], block.words[1], block.words[2], block.words[3]};
}

// The known-answer vectors of Random123 (kat_vectors, philox4x32 10 rounds).
TEST(Philox, MatchesTheReferenceOutputs) {
  EXPECT_EQ(words(bertc::philox4x32Block(0, 0, 0, 0, 0, 0)),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(words(bertc::philox4x32Block(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
                                         0xffffffff)),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(words(bertc::philox4x32Block(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822,
                                         0x299f31d0)),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  EXPECT_EQ(bertc::philox4x32(0, 0, 0, 0, 0, 0), 0x6627e8d5u);
}

constexpr float kRate = 0.3f;
const bertc::DropoutKey kKey{0x0123456789abcdefull, 17, 5, 12};

// Element 8g + k of a row is kept iff half k % 2 of word k / 2 of the call on counter (g, row
// of the effective batch, step, stream), keyed by the seed, is at least ceil(rate * 2^16):
// 19661 for 0.3 (0.3 * 65536 = 19660.8).
TEST(DropoutMask, ElementEightGPlusKUsesHalfKOfCallG) {
  EXPECT_EQ(bertc::dropoutThreshold(kRate), 19661u);
  EXPECT_EQ(bertc::dropoutThreshold(0.0f), 0u);
  EXPECT_EQ(bertc::dropoutThreshold(0.5f), 32768u);
  for (int64_t row = 0; row < 3; ++row)
    for (uint64_t group = 0; group < 50; ++group) {
      const PhiloxBlock draw = bertc::philox4x32Block(
          uint32_t(group), uint32_t(kKey.firstRow + row), uint32_t(kKey.step), kKey.stream,
          uint32_t(kKey.seed), uint32_t(kKey.seed >> 32));
      for (int k = 0; k < 8; ++k) {
        const uint32_t half = k % 2 ? draw.words[k / 2] >> 16 : draw.words[k / 2] & 0xffffu;
        const bool expected = half >= 19661u;
        EXPECT_EQ(bertc::dropoutKeep(kKey, row, 8 * group + uint64_t(k), kRate), expected)
            << "row " << row << ", element " << 8 * group + k;
        EXPECT_EQ((bertc::dropoutKeepGroup(kKey, row, group, kRate) >> k) & 1u, expected ? 1u : 0u);
      }
    }
}

// Eight separate draws: all eight decisions of a group agree with probability
// 0.7^8 + 0.3^8 = 0.0577 (it would be 1 with one draw used eight times), and each element
// of a group is kept with probability 0.7 (1 - 19661 / 65536 = 0.69999695).
TEST(DropoutMask, TheEightElementsOfAGroupAreSeparateDraws) {
  constexpr int kGroups = 40000;
  int agreeing = 0;
  std::array<int, 8> kept{};
  for (uint64_t group = 0; group < kGroups; ++group) {
    const uint32_t bits = bertc::dropoutKeepGroup(kKey, 0, group, kRate);
    agreeing += bits == 0 || bits == 0xff;
    for (int k = 0; k < 8; ++k)
      kept[k] += (bits >> k) & 1u;
  }
  // Binomial standard deviations: sqrt(0.0577 * 0.9423 / n) = 0.0012, sqrt(0.21 / n) = 0.0023.
  EXPECT_NEAR(double(agreeing) / kGroups, std::pow(0.7, 8) + std::pow(0.3, 8), 0.006);
  for (int k = 0; k < 8; ++k)
    EXPECT_NEAR(double(kept[k]) / kGroups, 1.0 - kRate, 0.012) << "decision " << k;
}

} // namespace
