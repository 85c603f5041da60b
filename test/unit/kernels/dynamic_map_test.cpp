// Tests of bitsandbytes' dynamic quantization maps (dynamic_map.h) against their definition
// (create_dynamic_map: per decade i = 0..6, the midpoints of n_i equal parts of [0.1, 1],
// times 10^(i-6); n_i = 2^i signed, with each value's negation, 2^(i+1) unsigned; plus 0
// and 1), rebuilt here as bitsandbytes builds it, in long double; and of the nearest-code
// encoding against a linear scan.
#include "bertc/runtime/dynamic_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace bertc;

namespace {

const std::array<float, kDynamicMapSize> kSigned = dynamicMap(DynamicMapKind::Signed);
const std::array<float, kDynamicMapSize> kUnsigned = dynamicMap(DynamicMapKind::Unsigned);

/// create_dynamic_map's list, sorted: linspace boundaries, their midpoints, scaled.
std::vector<long double> definition(bool isSigned) {
  std::vector<long double> values = {0.0L, 1.0L};
  for (int decade = 0; decade < 7; ++decade) {
    const int parts = isSigned ? 1 << decade : 2 << decade;
    const long double scale = std::pow(10.0L, decade - 6);
    for (int j = 0; j < parts; ++j) {
      const long double low = 0.1L + 0.9L * j / parts, high = 0.1L + 0.9L * (j + 1) / parts;
      values.push_back(scale * (low + high) / 2);
      if (isSigned)
        values.push_back(-scale * (low + high) / 2);
    }
  }
  std::sort(values.begin(), values.end());
  return values;
}

/// Expects each entry to be its defining value rounded to fp32: within half an ulp.
void expectMatchesDefinition(const std::array<float, kDynamicMapSize> &map, bool isSigned) {
  const std::vector<long double> values = definition(isSigned);
  ASSERT_EQ(values.size(), map.size());
  for (size_t code = 0; code < map.size(); ++code)
    EXPECT_LE(std::fabs(map[code] - values[code]), std::ldexp(std::fabs(values[code]), -24))
        << "code " << code << ": " << map[code] << " vs " << double(values[code]);
}

/// Values of `map` in (10^(decade-7), 10^(decade-6)).
int countInDecade(const std::array<float, kDynamicMapSize> &map, int decade) {
  const double low = std::pow(10.0, decade - 7), high = std::pow(10.0, decade - 6);
  return int(std::count_if(map.begin(), map.end(),
                           [&](float value) { return value > low && value < high; }));
}

} // namespace

TEST(DynamicMap, SignedMatchesDefinition) { expectMatchesDefinition(kSigned, true); }
TEST(DynamicMap, UnsignedMatchesDefinition) { expectMatchesDefinition(kUnsigned, false); }

TEST(DynamicMap, HasBitsandbytesShape) {
  EXPECT_EQ(kSigned.size(), 256u);
  EXPECT_TRUE(std::is_sorted(kSigned.begin(), kSigned.end(), std::less_equal<float>()));
  EXPECT_TRUE(std::is_sorted(kUnsigned.begin(), kUnsigned.end(), std::less_equal<float>()));
  EXPECT_EQ(kSigned[kSignedZeroCode], 0.0f);
  EXPECT_EQ(kUnsigned[0], 0.0f);
  EXPECT_EQ(kSigned[255], 1.0f);
  EXPECT_EQ(kUnsigned[255], 1.0f);
  EXPECT_EQ(*std::max_element(kSigned.begin(), kSigned.end()), 1.0f);
  // The signed map's extremes below 1: 1271/1280 (decade 6, part 63 of 64), and the
  // unsigned map's: 2551/2560 (part 127 of 128).
  EXPECT_EQ(kSigned[0], -0.99296875f);
  EXPECT_EQ(kSigned[254], 0.99296875f);
  EXPECT_EQ(kUnsigned[254], 0.996484375f);
}

// Code 127 - k is the negation of code 127 + k: every value but 1 has its negation.
TEST(DynamicMap, SignedIsSymmetricAboutZero) {
  for (int k = 1; k <= 127; ++k)
    EXPECT_EQ(kSigned[kSignedZeroCode - k], -kSigned[kSignedZeroCode + k]) << "k = " << k;
}

// The dynamic exponent: decade i holds 2^i positive signed values and 2^(i+1) unsigned ones.
TEST(DynamicMap, ValuesPerDecadeDoubleWithTheExponent) {
  for (int decade = 0; decade < 7; ++decade) {
    EXPECT_EQ(countInDecade(kSigned, decade), 1 << decade) << "decade " << decade;
    EXPECT_EQ(countInDecade(kUnsigned, decade), 2 << decade) << "decade " << decade;
  }
  EXPECT_EQ(std::count_if(kUnsigned.begin(), kUnsigned.end(), [](float v) { return v < 0; }), 0);
}

// The smallest values: 0.55e-6 signed (decade 0's one part [0.1, 1]), 0.325e-6 and
// 0.775e-6 unsigned (its two parts [0.1, 0.55] and [0.55, 1]).
TEST(DynamicMap, SmallestValuesAreDecadeZeroMidpoints) {
  EXPECT_EQ(kSigned[128], float(5.5e-7));
  EXPECT_EQ(kUnsigned[1], float(3.25e-7));
  EXPECT_EQ(kUnsigned[2], float(7.75e-7));
}

// Every value encodes to its own code, and values just either side of the midpoint
// between two neighbours to the nearer one.
TEST(NearestCode, MapValuesAndMidpoints) {
  for (const auto *map : {&kSigned, &kUnsigned}) {
    for (int code = 0; code < kDynamicMapSize; ++code)
      EXPECT_EQ(nearestCode(map->data(), (*map)[code]), code);
    for (int code = 0; code + 1 < kDynamicMapSize; ++code) {
      const float middle = ((*map)[code] + (*map)[code + 1]) / 2;
      EXPECT_EQ(nearestCode(map->data(), std::nextafter(middle, -2.0f)), code);
      EXPECT_EQ(nearestCode(map->data(), std::nextafter(middle, 2.0f)), code + 1);
    }
  }
  EXPECT_EQ(nearestCode(kSigned.data(), -1.0f), 0);
  EXPECT_EQ(nearestCode(kSigned.data(), 0.0f), kSignedZeroCode);
  EXPECT_EQ(nearestCode(kUnsigned.data(), 1e-9f), 0);
}

// The binary search finds what a linear scan for the smallest distance finds, except within
// the rounding of an fp32 midpoint (half an ulp of the sum), where either neighbour is nearest.
TEST(NearestCode, MatchesLinearScan) {
  std::mt19937 generator(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int trial = 0; trial < 20000; ++trial) {
    // Half the values log-uniform over the map's seven decades, where most codes lie.
    float x = uniform(generator);
    if (trial % 2)
      x = std::copysign(std::pow(10.0f, 7.0f * (std::fabs(x) - 1.0f)), x);
    for (const auto *map : {&kSigned, &kUnsigned}) {
      int nearest = 0;
      for (int code = 1; code < kDynamicMapSize; ++code)
        if (std::fabs(double(x) - (*map)[code]) < std::fabs(double(x) - (*map)[nearest]))
          nearest = code;
      const int found = nearestCode(map->data(), x);
      const double excess =
          std::fabs(double(x) - (*map)[found]) - std::fabs(double(x) - (*map)[nearest]);
      ASSERT_TRUE(found == nearest ||
                  excess <= std::ldexp(std::fabs((*map)[found] + (*map)[nearest]), -24))
          << "x = " << x << ": code " << found << ", nearest " << nearest;
    }
  }
}
