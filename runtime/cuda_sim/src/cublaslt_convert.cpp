// fp16 and bf16 to and from fp32 for the simulated cuBLASLt, written from the IEEE 754
// binary16 and bfloat16 formats (not shared with the code under test): widening is exact,
// narrowing rounds to nearest, ties to even, keeps subnormals, overflows to infinity and
// turns NaN into the canonical NaN 0x7fff, as PTX's cvt.rn does. fp32 rounded to TF32
// (what CUBLAS_COMPUTE_32F_FAST_TF32's multiplies see) likewise rounds to nearest even.
#include "cublaslt_internal.h"

#include <cstring>

namespace bertc::sim::cublaslt {
namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

float halfToFloat(uint16_t half) {
  const uint32_t sign = uint32_t(half & 0x8000) << 16;
  const uint32_t exponent = (half >> 10) & 0x1f, mantissa = half & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in fp32.
    const float magnitude = float(mantissa) * (1.0f / 16777216.0f);
    return floatOf(sign | bitsOf(magnitude));
  }
  if (exponent == 0x1f)
    return floatOf(sign | 0x7f800000 | (mantissa << 13));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// Rounding to binary16, by range of the magnitude:
///  1. NaN becomes the canonical NaN, infinity stays infinity;
///  2. from 65520 (halfway between 65504, the largest half, and 65536) up: infinity;
///  3. normal halves (from 2^-14): rebias the exponent (127 -> 15) and round the 23-bit
///     mantissa to 10 bits; a carry rolls into the exponent, which is still right;
///  4. subnormal halves: the magnitude in units of 2^-24, rounded to an integer;
///     up to 2^-25 (half a unit, a tie with an even zero) that is zero.
uint16_t floatToHalf(float value) {
  const uint32_t bits = bitsOf(value);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  const uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x7f800000)
    return magnitude > 0x7f800000 ? 0x7fff : sign | 0x7c00;
  if (magnitude >= 0x477ff000)
    return sign | 0x7c00;
  if (magnitude >= 0x38800000) {
    const uint32_t rebiased = magnitude - 0x38000000;
    return sign | uint16_t((rebiased + 0xfff + ((rebiased >> 13) & 1)) >> 13);
  }
  if (magnitude <= 0x33000000)
    return sign;
  const uint32_t exponent = magnitude >> 23, mantissa = (magnitude & 0x7fffff) | 0x800000;
  const uint32_t shift = 126 - exponent; // 14..24: magnitude = mantissa * 2^-24 >> shift
  const uint32_t quotient = mantissa >> shift, remainder = mantissa & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  const bool roundUp = remainder > halfway || (remainder == halfway && (quotient & 1));
  return sign | uint16_t(quotient + roundUp);
}

float bf16ToFloat(uint16_t value) { return floatOf(uint32_t(value) << 16); }

/// bf16 is fp32's upper half: round the lower 16 bits away, ties to even.
uint16_t floatToBf16(float value) {
  const uint32_t bits = bitsOf(value);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return 0x7fff;
  return uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

} // namespace

/// TF32 keeps fp32's top 19 bits: the 13 low mantissa bits are rounded away, ties to even,
/// on the bit pattern (a carry rolls into the exponent, up to infinity past TF32's largest
/// value; subnormals round the same way). Infinity and NaN pass unchanged.
float roundToTf32(float value) {
  const uint32_t bits = bitsOf(value);
  if ((bits & 0x7f800000) == 0x7f800000)
    return value;
  return floatOf((bits + 0xfff + ((bits >> 13) & 1)) & ~uint32_t(0x1fff));
}

void loadFloats(cudaDataType_t type, const void *source, float *target, int64_t count) {
  const auto *halves = static_cast<const uint16_t *>(source);
  switch (type) {
  case CUDA_R_16F:
    for (int64_t i = 0; i < count; ++i)
      target[i] = halfToFloat(halves[i]);
    return;
  case CUDA_R_16BF:
    for (int64_t i = 0; i < count; ++i)
      target[i] = bf16ToFloat(halves[i]);
    return;
  default:
    std::memcpy(target, source, size_t(count) * sizeof(float));
  }
}

void storeFloats(cudaDataType_t type, const float *source, void *target, int64_t count) {
  auto *halves = static_cast<uint16_t *>(target);
  switch (type) {
  case CUDA_R_16F:
    for (int64_t i = 0; i < count; ++i)
      halves[i] = floatToHalf(source[i]);
    return;
  case CUDA_R_16BF:
    for (int64_t i = 0; i < count; ++i)
      halves[i] = floatToBf16(source[i]);
    return;
  default:
    std::memcpy(target, source, size_t(count) * sizeof(float));
  }
}

} // namespace bertc::sim::cublaslt
