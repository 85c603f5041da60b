// Internal to the CUDA kernels: GELU's derivatives, erf GELU's in the CPU twin's formula
// (elementwise.cpp) and the tanh approximation's from gelu_tanh.h, which the CPU shares; used
// by the plain GELU backwards and the ones fused with a bias gradient, which take the
// gradient as a callable (ErfGeluGradient, TanhGeluGradient).
#pragma once

#include "bertc/runtime/gelu_tanh.h"

namespace bertc::cuda {

constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

/// dy * d/dx [x Φ(x)] = dy * (Φ(x) + x φ(x)), with Φ the standard normal CDF and φ its
/// density.
__device__ inline float geluGradient(float dy, float x) {
  const float cdf = 0.5f * (1.0f + erff(x * kInvSqrt2));
  const float pdf = expf(-0.5f * x * x) * kInvSqrt2Pi;
  return dy * (cdf + x * pdf);
}

/// dy * the tanh approximation's derivative at x.
__device__ inline float geluTanhGradient(float dy, float x) { return dy * geluTanhDerivative(x); }

/// The two gradients as the fused kernels take them.
struct ErfGeluGradient {
  __device__ float operator()(float dy, float x) const { return geluGradient(dy, x); }
};
struct TanhGeluGradient {
  __device__ float operator()(float dy, float x) const { return geluTanhGradient(dy, x); }
};

} // namespace bertc::cuda
