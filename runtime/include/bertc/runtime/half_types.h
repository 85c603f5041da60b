// 16-bit storage types of bertc's mixed precision: bf16 (bfloat16) and fp16 (IEEE 754
// binary16). Tensors are stored in them and computed on in fp32, so a conversion happens
// on every load (exact) and every store (rounded to nearest, ties to even). Plain structs
// over uint16_t with the same bit patterns as torch.bfloat16 and torch.float16, usable from
// host and CUDA code alike; nothing here depends on a compiler's half-precision support.
#pragma once

#include <cstdint>
#include <cstring>

#include "bertc/runtime/host_device.h"

namespace bertc {

/// bfloat16: 1 sign, 8 exponent, 7 mantissa bits (the top half of an fp32).
struct bf16 {
  uint16_t bits;
};

/// IEEE 754 half precision: 1 sign, 5 exponent, 10 mantissa bits.
struct fp16 {
  uint16_t bits;
};

BERTC_HOST_DEVICE inline uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

BERTC_HOST_DEVICE inline float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// Rounds `value` to bf16, ties to even; NaN stays NaN (made quiet), overflow becomes inf.
BERTC_HOST_DEVICE inline bf16 toBf16(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return bf16{uint16_t((bits >> 16) | 0x0040u)};
  uint32_t roundingBias = 0x7fffu + ((bits >> 16) & 1u);
  return bf16{uint16_t((bits + roundingBias) >> 16)};
}

BERTC_HOST_DEVICE inline float toFloat(bf16 value) {
  return bitsToFloat(uint32_t(value.bits) << 16);
}

/// Rounds `value` to fp16, ties to even, with gradual underflow to subnormals; values from
/// 65520 (halfway past the largest half, 65504) up become inf; NaN stays NaN (made quiet).
BERTC_HOST_DEVICE inline fp16 toFp16(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: keep the top mantissa bits, set the quiet bit
    return fp16{uint16_t(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu))};
  if (magnitude >= 0x477ff000u) // >= 65520 (and inf)
    return fp16{uint16_t(sign | 0x7c00u)};
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal half, in units of 2^-24
    if (magnitude <= 0x33000000u) // at most 2^-25, half a unit: rounds to (even) zero
      return fp16{sign};
    uint32_t exponent = magnitude >> 23;
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - exponent; // value / 2^-24 = mantissa >> shift
    uint32_t units = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (units & 1u)))
      ++units; // may carry into the smallest normal, whose encoding follows on
    return fp16{uint16_t(sign | units)};
  }
  // Normal: rebias the exponent (127 -> 15) and round away the low 13 mantissa bits; a
  // carry out of the mantissa correctly increments the exponent.
  uint32_t half = (magnitude - 0x38000000u) >> 13;
  uint32_t remainder = magnitude & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u)))
    ++half;
  return fp16{uint16_t(sign | half)};
}

BERTC_HOST_DEVICE inline float toFloat(fp16 value) {
  uint32_t sign = uint32_t(value.bits & 0x8000u) << 16;
  uint32_t exponent = (value.bits >> 10) & 0x1fu, mantissa = value.bits & 0x3ffu;
  if (exponent == 0x1fu)
    return bitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in fp32
    float magnitude = float(mantissa) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  return bitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

BERTC_HOST_DEVICE inline float toFloat(float value) { return value; }

/// The storage value of `value`: identity for float, rounded for the 16-bit types.
template <typename T> BERTC_HOST_DEVICE T fromFloat(float value);
template <> BERTC_HOST_DEVICE inline float fromFloat<float>(float value) { return value; }
template <> BERTC_HOST_DEVICE inline bf16 fromFloat<bf16>(float value) { return toBf16(value); }
template <> BERTC_HOST_DEVICE inline fp16 fromFloat<fp16>(float value) { return toFp16(value); }

} // namespace bertc
