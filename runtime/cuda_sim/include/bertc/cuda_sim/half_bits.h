// IEEE binary16 and bfloat16 bit conversions as CUDA's __float2half_rn, __half2float,
// __float2bfloat16_rn and __bfloat162float define them: round to nearest even, subnormals
// kept, overflow to infinity, and every NaN becomes the canonical 0x7fff. Written from the
// formats' definitions, independently of bertc's own half_types.h, which it checks.
#pragma once

#include <cstdint>
#include <cstring>

namespace bertc::sim {

inline uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// Drops the low `shift` bits of `value`, rounding to nearest, ties to even.
inline uint32_t shiftRightRoundingToEven(uint32_t value, unsigned shift) {
  if (shift == 0)
    return value;
  if (shift > 31)
    return 0;
  const uint32_t kept = value >> shift, dropped = value & ((1u << shift) - 1),
                 half = 1u << (shift - 1);
  return kept + (dropped > half || (dropped == half && (kept & 1u)));
}

inline uint16_t floatToHalfBits(float value) {
  const uint32_t bits = floatBits(value);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return 0x7fff;
  const int exponent = int(magnitude >> 23) - 127;
  if (exponent > 15)
    return sign | 0x7c00u; // beyond the largest binary16 exponent, infinity included
  const uint32_t significand = (magnitude & 0x7fffffu) | (magnitude >= 0x00800000u ? 0x800000u : 0);
  if (exponent >= -14) {
    // Normal: 10 of the 23 fraction bits stay; a carry out of the fraction raises the
    // exponent, from 15 to infinity.
    return sign | uint16_t((uint32_t(exponent + 15) << 10) +
                           shiftRightRoundingToEven(magnitude & 0x7fffffu, 13));
  }
  // Subnormal: the value in units of 2^-24 (a carry into the exponent field is exact).
  return sign | uint16_t(shiftRightRoundingToEven(significand, unsigned(-exponent - 1)));
}

inline float halfBitsToFloat(uint16_t half) {
  const uint32_t sign = uint32_t(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu, fraction = half & 0x3ffu;
  if (exponent == 0x1f)
    return floatFromBits(sign | 0x7f800000u | (fraction << 13));
  if (exponent != 0)
    return floatFromBits(sign | ((exponent + 112) << 23) | (fraction << 13));
  const float subnormal = float(fraction) * 0x1p-24f; // exact
  return sign ? -subnormal : subnormal;
}

inline uint16_t floatToBfloat16Bits(float value) {
  const uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return 0x7fff;
  return uint16_t(shiftRightRoundingToEven(bits, 16)); // a carry reaches infinity exactly
}

inline float bfloat16BitsToFloat(uint16_t bits) { return floatFromBits(uint32_t(bits) << 16); }

} // namespace bertc::sim
