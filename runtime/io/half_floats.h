// 16-bit floats as checkpoints store them (bf16, IEEE binary16), widened to fp32 exactly:
// what the safetensors and PyTorch readers share.
#pragma once

#include <cstdint>
#include <cstring>

namespace bertc {

/// bfloat16 to binary32: the upper half of an fp32.
inline float bf16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

/// IEEE binary16 to binary32, exact for every input (subnormals, infinities, NaN).
inline float f16ToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  uint32_t wide;
  if (exponent == 0x1F) {
    wide = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    wide = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    wide = sign;
  } else {
    // Subnormal half: shift the mantissa up until its leading 1 becomes the implicit bit.
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    wide = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

} // namespace bertc
