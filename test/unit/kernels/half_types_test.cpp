// The 16-bit storage conversions against hand-computed bit patterns (ties to even, overflow,
// subnormals, inf and NaN), against independent references over many floats (the
// compiler's _Float16 for fp16; an exact nearest-even choice in double for bf16), and as
// exact round trips of every 16-bit pattern.
#include "bertc/runtime/half_types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace bertc;

namespace {
float fromBits(uint32_t bits) { return bitsToFloat(bits); }
} // namespace

TEST(Bf16, RoundsToNearestTiesToEven) {
  EXPECT_EQ(toBf16(1.0f).bits, 0x3F80);
  EXPECT_EQ(toBf16(fromBits(0x3F808000)).bits, 0x3F80); // halfway, 0x3F80 is even
  EXPECT_EQ(toBf16(fromBits(0x3F818000)).bits, 0x3F82); // halfway, 0x3F82 is even
  EXPECT_EQ(toBf16(fromBits(0x3F808001)).bits, 0x3F81); // just above halfway
  EXPECT_EQ(toBf16(fromBits(0x3F807FFF)).bits, 0x3F80); // just below
  EXPECT_EQ(toBf16(-3.140625f).bits, 0xC049);           // exact: 0xC0490000
  EXPECT_EQ(toBf16(fromBits(0x00018000)).bits, 0x0002); // subnormal tie rounds up to even
  EXPECT_EQ(toBf16(fromBits(0x00008000)).bits, 0x0000); // subnormal tie rounds down to even
}

TEST(Bf16, OverflowInfinityAndNaN) {
  EXPECT_EQ(toBf16(fromBits(0x7F7FFFFF)).bits, 0x7F80); // FLT_MAX rounds up to inf
  EXPECT_EQ(toBf16(fromBits(0x7F7F7FFF)).bits, 0x7F7F);
  EXPECT_EQ(toBf16(std::numeric_limits<float>::infinity()).bits, 0x7F80);
  EXPECT_EQ(toBf16(-std::numeric_limits<float>::infinity()).bits, 0xFF80);
  EXPECT_EQ(toBf16(-0.0f).bits, 0x8000);
  // A signalling NaN whose payload lies in the dropped bits must not become inf.
  EXPECT_EQ(toBf16(fromBits(0x7F800001)).bits, 0x7FC0);
  EXPECT_TRUE(std::isnan(toFloat(toBf16(std::nanf("")))));
}

TEST(Bf16, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    float value = toFloat(bf16{uint16_t(bits)});
    if (std::isnan(value))
      EXPECT_TRUE(std::isnan(toFloat(toBf16(value))));
    else
      ASSERT_EQ(toBf16(value).bits, bits);
  }
}

// Nearest bf16 by exact distances in double (every bf16 and fp32 is exact in double).
TEST(Bf16, MatchesNearestEvenReferenceOverManyFloats) {
  for (uint64_t bits = 0; bits < 0x7F800000u; bits += 4099) {
    float value = fromBits(uint32_t(bits));
    uint16_t below = uint16_t(bits >> 16), above = uint16_t(below + 1);
    // Above the largest bf16, the next step would be 2^128: rounding there means inf.
    double low = toFloat(bf16{below});
    double high = above == 0x7F80 ? std::ldexp(1.0, 128) : double(toFloat(bf16{above}));
    double distanceLow = double(value) - low, distanceHigh = high - double(value);
    uint16_t expected = distanceLow < distanceHigh   ? below
                        : distanceHigh < distanceLow ? above
                        : (below % 2 == 0)           ? below
                                                     : above;
    ASSERT_EQ(toBf16(value).bits, expected) << std::hex << bits;
  }
}

TEST(Fp16, HandComputedPatterns) {
  EXPECT_EQ(toFp16(1.0f).bits, 0x3C00);
  EXPECT_EQ(toFp16(-2.0f).bits, 0xC000);
  EXPECT_EQ(toFp16(0.1f).bits, 0x2E66);                 // 0.0999755859375
  EXPECT_EQ(toFp16(fromBits(0x3F801000)).bits, 0x3C00); // 1 + 2^-11: tie, to even
  EXPECT_EQ(toFp16(fromBits(0x3F803000)).bits, 0x3C02); // 1 + 3 * 2^-11: tie, to even
  EXPECT_EQ(toFp16(65504.0f).bits, 0x7BFF);             // the largest half
  EXPECT_EQ(toFp16(std::nextafter(65520.0f, 0.0f)).bits, 0x7BFF);
  EXPECT_EQ(toFp16(65520.0f).bits, 0x7C00); // halfway to 2^16: inf
  EXPECT_EQ(toFp16(-1e6f).bits, 0xFC00);
  EXPECT_EQ(toFp16(std::numeric_limits<float>::infinity()).bits, 0x7C00);
  EXPECT_EQ(toFp16(std::nanf("")).bits & 0x7E00, 0x7E00);
}

TEST(Fp16, Subnormals) {
  const float unit = std::ldexp(1.0f, -24); // the smallest subnormal half
  EXPECT_EQ(toFp16(unit).bits, 0x0001);
  EXPECT_EQ(toFp16(unit / 2).bits, 0x0000); // 2^-25: tie, to even zero
  EXPECT_EQ(toFp16(std::nextafter(unit / 2, 1.0f)).bits, 0x0001);
  EXPECT_EQ(toFp16(1.5f * unit).bits, 0x0002);    // tie between 1 and 2 units
  EXPECT_EQ(toFp16(1023 * unit).bits, 0x03FF);    // the largest subnormal
  EXPECT_EQ(toFp16(1023.5f * unit).bits, 0x0400); // tie: carries into 2^-14
  EXPECT_EQ(toFp16(-3 * unit).bits, 0x8003);
  EXPECT_EQ(toFloat(fp16{0x0001}), unit);
  EXPECT_EQ(toFloat(fp16{0x83FF}), -1023 * unit);
  EXPECT_EQ(toFloat(fp16{0x0400}), std::ldexp(1.0f, -14));
}

TEST(Fp16, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    float value = toFloat(fp16{uint16_t(bits)});
    if (std::isnan(value))
      EXPECT_TRUE(std::isnan(toFloat(toFp16(value))));
    else
      ASSERT_EQ(toFp16(value).bits, bits);
  }
}

#ifdef __FLT16_MAX__
// GCC's _Float16 conversion (libgcc, IEEE round to nearest even) as the reference.
TEST(Fp16, MatchesCompilerFloat16OverManyFloats) {
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 4099) {
    float value = fromBits(uint32_t(bits));
    if (std::isnan(value))
      continue;
    _Float16 reference = static_cast<_Float16>(value);
    uint16_t expected;
    std::memcpy(&expected, &reference, sizeof expected);
    ASSERT_EQ(toFp16(value).bits, expected) << std::hex << bits;
  }
}
#endif
