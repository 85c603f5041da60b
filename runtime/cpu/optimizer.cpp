// AdamW on the CPU, reproducing torch.optim.AdamW's fp32 single-tensor path (torch >= 2.0)
// operation by operation, so a CPU trainer and PyTorch agree to the last bit where the
// compiler does not fuse multiply-adds (this library builds with -ffp-contract=off);
// and the global gradient-norm clipping that may precede it. Elements are split over the
// threads (parallel.h); the norm adds fixed slices' sums in slice order. A 16-bit
// parameter's working copy is rounded from each chunk of updated masters while the chunk is
// still in cache.
#include "bertc/runtime/cpu_kernels.h"

#include "parallel.h"
#include "storage_types.h"

#include <cmath>

namespace bertc::cpu {

// Torch derives every scalar in double (Python floats) and rounds it to float where it meets
// a float tensor; per element it then runs, in this order:
//   1. p = p * (1 - lr*wd)                       param.mul_
//   2. m = lerp(m, g, 1 - b1)                     exp_avg.lerp_
//   3. v = v * b2, then v = v + ((1 - b2) * g) * g exp_avg_sq.mul_().addcmul_()
//   4. denom = sqrt(v) / sqrt(1 - b2^t) + eps     exp_avg_sq.sqrt() / ... .add_(eps)
//   5. p = p + (-(lr / (1 - b1^t)) * m) / denom   param.addcdiv_
namespace {
/// The update of n values; `working`, if not null, gets each updated value rounded to T.
template <typename T>
void update(float *param, const float *grad, float *m, float *v, T *working, int64_t n,
            const AdamWConfig &config) {
  const double step = double(config.step);
  const double biasCorrection1 = 1.0 - std::pow(config.beta1, step);
  const double biasCorrection2 = 1.0 - std::pow(config.beta2, step);

  const float decayFactor = float(1.0 - config.lr * config.weightDecay);
  const float firstMomentWeight = float(1.0 - config.beta1);
  const float beta2 = float(config.beta2);
  const float secondMomentWeight = float(1.0 - config.beta2);
  const float biasCorrection2Sqrt = float(std::sqrt(biasCorrection2));
  const float eps = float(config.eps);
  const float negativeStepSize = float(-(config.lr / biasCorrection1));

  forEachChunk(n, kElementwiseChunk, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float g = grad[i];
      const float p = param[i] * decayFactor;
      // torch's lerp switches form at weight 0.5 to stay accurate near both ends.
      const float mi = firstMomentWeight < 0.5f ? m[i] + firstMomentWeight * (g - m[i])
                                                : g - (g - m[i]) * (1.0f - firstMomentWeight);
      const float vi = v[i] * beta2 + secondMomentWeight * g * g;
      const float denom = std::sqrt(vi) / biasCorrection2Sqrt + eps;
      m[i] = mi;
      v[i] = vi;
      param[i] = p + negativeStepSize * mi / denom;
    }
    if (working)
      for (int64_t i = begin; i < end; ++i)
        working[i] = fromFloat<T>(param[i]);
  });
}
} // namespace

void adamwUpdate(float *param, const float *grad, float *m, float *v, int64_t n,
                 const AdamWConfig &config) {
  update(param, grad, m, v, static_cast<bf16 *>(nullptr), n, config);
}

void adamwUpdate(float *master, const float *grad, float *m, float *v, bf16 *working, int64_t n,
                 const AdamWConfig &config) {
  update(master, grad, m, v, working, n, config);
}

void adamwUpdate(float *master, const float *grad, float *m, float *v, fp16 *working, int64_t n,
                 const AdamWConfig &config) {
  update(master, grad, m, v, working, n, config);
}

namespace {
/// Slices of the gradient whose squared norms are summed apart, then added in order.
constexpr int64_t kNormSlices = 64;
} // namespace

float squaredNorm(const float *x, int64_t n) {
  double sliceSums[kNormSlices];
  forEachChunk(kNormSlices, 1, [&](int64_t slice, int64_t) {
    double sum = 0.0;
    const int64_t begin = n * slice / kNormSlices, end = n * (slice + 1) / kNormSlices;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = begin; i < end; ++i)
      sum += double(x[i]) * double(x[i]);
    sliceSums[slice] = sum;
  });
  double total = 0.0;
  for (double sliceSum : sliceSums)
    total += sliceSum;
  return float(total);
}

void clipByGlobalNorm(float *grad, int64_t n, float squaredNorm, float maxNorm) {
  const float coefficient = std::fmin(maxNorm / (std::sqrt(squaredNorm) + 1e-6f), 1.0f);
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      grad[i] *= coefficient;
  });
}

} // namespace bertc::cpu
