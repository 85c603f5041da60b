// Internal to the CUDA kernels: erf GELU's derivative, in the CPU twin's formula
// (elementwise.cpp), shared by the plain GELU backward and the one fused with a bias
// gradient.
#pragma once

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

} // namespace bertc::cuda
