// Internal to the CUDA kernels: one AdamW update of one element, shared by the fp32-state
// kernel (optimizer.cu) and the 8-bit-state kernel (adamw_8bit.cu). It runs the CPU twin's
// operations (optimizer.cpp, torch.optim.AdamW's fp32 path) in the same order with
// explicitly rounded intrinsics, which the compiler may not contract into fused
// multiply-adds: CPU and GPU updates agree bit for bit.
#pragma once

#include "bertc/runtime/cpu_kernels.h"

#include <cmath>

namespace bertc::cuda {

/// The per-step scalars, derived in double and rounded to float as the CPU twin does.
struct AdamWScalars {
  float decayFactor; ///< for parameters with decay; 1 for the others
  float firstMomentWeight;
  float beta2;
  float secondMomentWeight;
  float biasCorrection2Sqrt;
  float eps;
  float negativeStepSize;
};

inline AdamWScalars adamwScalars(const cpu::AdamWConfig &config) {
  const double step = double(config.step);
  const double biasCorrection1 = 1.0 - std::pow(config.beta1, step);
  const double biasCorrection2 = 1.0 - std::pow(config.beta2, step);
  return {float(1.0 - config.lr * config.weightDecay),
          float(1.0 - config.beta1),
          float(config.beta2),
          float(1.0 - config.beta2),
          float(std::sqrt(biasCorrection2)),
          float(config.eps),
          float(-(config.lr / biasCorrection1))};
}

/// One element: param (fp32), its gradient g and its moments m and v, updated in place;
/// decayFactor is s.decayFactor or 1.
__device__ __forceinline__ void adamwElement(float &param, float g, float &m, float &v,
                                             const AdamWScalars &s, float decayFactor) {
  const float p = __fmul_rn(param, decayFactor);
  // torch's lerp switches form at weight 0.5 to stay accurate near both ends.
  const float mi =
      s.firstMomentWeight < 0.5f
          ? __fadd_rn(m, __fmul_rn(s.firstMomentWeight, __fsub_rn(g, m)))
          : __fsub_rn(g, __fmul_rn(__fsub_rn(g, m), __fsub_rn(1.0f, s.firstMomentWeight)));
  const float vi =
      __fadd_rn(__fmul_rn(v, s.beta2), __fmul_rn(__fmul_rn(s.secondMomentWeight, g), g));
  const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), s.biasCorrection2Sqrt), s.eps);
  m = mi;
  v = vi;
  param = __fadd_rn(p, __fdiv_rn(__fmul_rn(s.negativeStepSize, mi), denom));
}

} // namespace bertc::cuda
