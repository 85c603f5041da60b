// Internal to the CPU kernels: exp and erf in fp32 written without branches or library calls,
// so that the compiler vectorises the loops that call them (std::exp and std::erf stay
// scalar calls without -ffast-math). The same methods PyTorch's vectorised CPU kernels use:
//   - exp(x) = 2^n exp(r) with n = round(x / ln 2) and |r| <= ln(2) / 2, exp(r) by Cephes'
//     degree-6 polynomial (within 2 ulp of the exact value); 0 below ln of the smallest
//     normal float, where std::exp returns denormals;
//   - erf(x) by Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7).
#pragma once

#include <cstdint>
#include <cstring>

namespace bertc::cpu {

/// e^x for fp32 x; 0 below about -87.3, and x is taken as 88 above it.
inline float vectorExp(float x) {
  constexpr float kMax = 88.0f, kMin = -87.3365447505531f; // 2^n stays a normal float
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;
  // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer (ties to even).
  constexpr float kRoundingShift = 12582912.0f;
  const float clamped = x > kMax ? kMax : (x < kMin ? kMin : x);
  const float n = (clamped * kLog2e + kRoundingShift) - kRoundingShift;
  const float r = (clamped - n * kLn2High) - n * kLn2Low;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float expR = p * r * r + r + 1.0f;
  const int32_t exponentBits = (int32_t(n) + 127) << 23;
  float twoToN;
  std::memcpy(&twoToN, &exponentBits, sizeof twoToN);
  return x < kMin ? 0.0f : expR * twoToN;
}

/// erf(x) for fp32 x, given e^(-x^2) (GELU's backward has it already).
inline float vectorErf(float x, float expMinusXSquared) {
  constexpr float kP = 0.3275911f;
  constexpr float kA1 = 0.254829592f, kA2 = -0.284496736f, kA3 = 1.421413741f, kA4 = -1.453152027f,
                  kA5 = 1.061405429f;
  const float absX = x < 0.0f ? -x : x;
  const float t = 1.0f / (1.0f + kP * absX);
  const float poly = ((((kA5 * t + kA4) * t + kA3) * t + kA2) * t + kA1) * t;
  const float magnitude = 1.0f - poly * expMinusXSquared;
  return x < 0.0f ? -magnitude : magnitude;
}

/// erf(x) for fp32 x.
inline float vectorErf(float x) { return vectorErf(x, vectorExp(-x * x)); }

} // namespace bertc::cpu
