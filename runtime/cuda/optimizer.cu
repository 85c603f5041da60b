// AdamW on the GPU over every trainable parameter in one launch: one block per chunk
// (a piece of one parameter, adamwChunks), so a parameter of any size spreads over many
// blocks and the decay flag is uniform within a block. Each element runs the CPU twin's
// operations (optimizer.cpp, torch.optim.AdamW's fp32 path) in the same order with explicitly
// rounded intrinsics, which the compiler may not contract into fused multiply-adds: CPU and
// GPU updates agree bit for bit.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "launch.cuh"

#include <cmath>

namespace bertc::cuda {

namespace {
constexpr int kThreads = 256;

/// The per-step scalars, derived in double and rounded to float as the CPU twin does.
struct AdamWScalars {
  float decayFactor; ///< for chunks with decay; 1 for the others
  float firstMomentWeight;
  float beta2;
  float secondMomentWeight;
  float biasCorrection2Sqrt;
  float eps;
  float negativeStepSize;
};

AdamWScalars adamwScalars(const cpu::AdamWConfig &config) {
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

__global__ void __launch_bounds__(kThreads)
    adamwKernel(float *params, const float *grads, float *m, float *v, const AdamWChunk *chunks,
                AdamWScalars s) {
  const AdamWChunk chunk = chunks[blockIdx.x];
  const float decayFactor = chunk.decay ? s.decayFactor : 1.0f;
  float *param = params + chunk.paramOffset;
  const float *grad = grads + chunk.stateOffset;
  float *m1 = m + chunk.stateOffset, *v1 = v + chunk.stateOffset;
  for (int i = threadIdx.x; i < chunk.count; i += kThreads) {
    const float g = grad[i], mPrev = m1[i];
    const float p = __fmul_rn(param[i], decayFactor);
    // torch's lerp switches form at weight 0.5 to stay accurate near both ends.
    const float mi =
        s.firstMomentWeight < 0.5f
            ? __fadd_rn(mPrev, __fmul_rn(s.firstMomentWeight, __fsub_rn(g, mPrev)))
            : __fsub_rn(g, __fmul_rn(__fsub_rn(g, mPrev), __fsub_rn(1.0f, s.firstMomentWeight)));
    const float vi =
        __fadd_rn(__fmul_rn(v1[i], s.beta2), __fmul_rn(__fmul_rn(s.secondMomentWeight, g), g));
    const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), s.biasCorrection2Sqrt), s.eps);
    m1[i] = mi;
    v1[i] = vi;
    param[i] = __fadd_rn(p, __fdiv_rn(__fmul_rn(s.negativeStepSize, mi), denom));
  }
}
} // namespace

void adamwUpdate(float *params, const float *grads, float *m, float *v, const AdamWChunk *chunks,
                 int64_t chunkCount, const cpu::AdamWConfig &config, cudaStream_t stream) {
  if (chunkCount == 0)
    return;
  BERTC_LAUNCH(adamwKernel, unsigned(chunkCount), kThreads, 0, stream, params, grads, m, v, chunks,
               adamwScalars(config));
}

} // namespace bertc::cuda
