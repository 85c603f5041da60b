// The simulated device's stand-in for CUDA's cuda_bf16.h: __nv_bfloat16 as its 16 bits, and
// the conversions bertc's kernels use.
#pragma once

#include "bertc/cuda_sim/half_bits.h"

struct __nv_bfloat16 {
  unsigned short __x;
};

inline __nv_bfloat16 __float2bfloat16_rn(float value) {
  return {bertc::sim::floatToBfloat16Bits(value)};
}
inline float __bfloat162float(__nv_bfloat16 value) {
  return bertc::sim::bfloat16BitsToFloat(value.__x);
}
