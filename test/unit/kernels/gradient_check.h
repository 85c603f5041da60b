// What the kernel tests share: seeded random tensors and the finite-difference check every
// backward kernel goes through. For L = sum_i r_i y_i(x) with a fixed random projection r,
// the analytic dL/dx the backward returns (fed dy = r) must match the central differences
// (L(x + h e_k) - L(x - h e_k)) / 2h of the forward, with L accumulated in double.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace bertc::test {

/// n values uniform in [lo, hi), reproducible from `seed`.
inline std::vector<float> randomTensor(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::vector<float> values(n);
  for (float &value : values)
    value = uniform(engine);
  return values;
}

/// L = sum_i projection_i * output_i, in double.
inline double project(const std::vector<float> &output, const std::vector<float> &projection) {
  double sum = 0.0;
  for (size_t i = 0; i < output.size(); ++i)
    sum += double(projection[i]) * double(output[i]);
  return sum;
}

/// Central differences of L = project(forward(), projection) with respect to every element of
/// `input`, which `forward` reads by reference; `input` is left as it was. The divisor is the
/// perturbation actually representable in fp32, not the nominal 2h.
inline std::vector<double> numericGradient(std::vector<float> &input,
                                           const std::vector<float> &projection,
                                           const std::function<std::vector<float>()> &forward,
                                           float step = 1e-2f) {
  std::vector<double> gradient(input.size());
  for (size_t k = 0; k < input.size(); ++k) {
    const float original = input[k];
    const float plus = original + step, minus = original - step;
    input[k] = plus;
    const double lossPlus = project(forward(), projection);
    input[k] = minus;
    const double lossMinus = project(forward(), projection);
    input[k] = original;
    gradient[k] = (lossPlus - lossMinus) / (double(plus) - double(minus));
  }
  return gradient;
}

/// Expects |analytic - numeric| <= atol + rtol * |numeric| for every element, and a
/// gradient large enough somewhere that the comparison is not satisfied by zeros alone.
inline void expectGradientNear(const std::vector<float> &analytic,
                               const std::vector<double> &numeric, const std::string &name,
                               double atol = 1e-3, double rtol = 1e-2) {
  ASSERT_EQ(analytic.size(), numeric.size()) << name;
  double largest = 0.0;
  for (double value : numeric)
    largest = std::max(largest, std::abs(value));
  EXPECT_GT(largest, 10.0 * atol) << name << ": gradient too small to check";
  for (size_t k = 0; k < analytic.size(); ++k)
    EXPECT_NEAR(analytic[k], numeric[k], atol + rtol * std::abs(numeric[k]))
        << name << "[" << k << "]";
}

} // namespace bertc::test
