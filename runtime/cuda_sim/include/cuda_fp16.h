// The simulated device's stand-in for CUDA's cuda_fp16.h: __half as its 16 bits, and the
// conversions bertc's kernels use.
#pragma once

#include "bertc/cuda_sim/half_bits.h"

struct __half {
  unsigned short __x;
};

inline __half __float2half_rn(float value) { return {bertc::sim::floatToHalfBits(value)}; }
inline float __half2float(__half value) { return bertc::sim::halfBitsToFloat(value.__x); }
