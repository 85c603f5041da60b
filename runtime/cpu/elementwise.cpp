// Elementwise CPU kernels: add, gradient accumulation, GELU, tanh, counter-based dropout, the
// token selection a classification head uses (BERT's pooler reads token 0) and the flatten
// of a custom head.
// Plain loops over contiguous fp32 arrays; the compiler vectorises what it can.
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"

#include <cmath>
#include <cstring>

namespace bertc::cpu {

namespace {
constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;
} // namespace

void add(const float *a, const float *b, float *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = a[i] + b[i];
}

void accumulate(const float *g, float *grad, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    grad[i] += g[i];
}

void geluForward(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] * 0.5f * (1.0f + std::erf(x[i] * kInvSqrt2));
}

// d/dx [x Φ(x)] = Φ(x) + x φ(x), with Φ the standard normal CDF and φ its density.
void geluBackward(const float *dy, const float *x, float *dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float cdf = 0.5f * (1.0f + std::erf(x[i] * kInvSqrt2));
    float pdf = std::exp(-0.5f * x[i] * x[i]) * kInvSqrt2Pi;
    dx[i] = dy[i] * (cdf + x[i] * pdf);
  }
}

void tanhForward(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = std::tanh(x[i]);
}

void tanhBackward(const float *dy, const float *y, float *dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

// Forward and backward are the same map (multiply by the scaled mask), so both call this.
static void applyDropoutMask(const float *in, float *out, int64_t n, float rate, uint64_t seed,
                             uint64_t step, uint32_t stream) {
  if (rate == 0.0f) {
    if (in != out)
      std::memcpy(out, in, size_t(n) * sizeof(float));
    return;
  }
  const float keptScale = 1.0f / (1.0f - rate);
  for (int64_t i = 0; i < n; ++i)
    out[i] = dropoutKeep(seed, step, stream, uint64_t(i), rate) ? in[i] * keptScale : 0.0f;
}

void dropoutForward(const float *x, float *y, int64_t n, float rate, uint64_t seed, uint64_t step,
                    uint32_t stream) {
  applyDropoutMask(x, y, n, rate, seed, step, stream);
}

void dropoutBackward(const float *dy, float *dx, int64_t n, float rate, uint64_t seed,
                     uint64_t step, uint32_t stream) {
  applyDropoutMask(dy, dx, n, rate, seed, step, stream);
}

void selectTokenForward(const float *x, float *out, int64_t batch, int64_t seq, int64_t hidden,
                        int64_t index) {
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(out + b * hidden, x + (b * seq + index) * hidden, size_t(hidden) * sizeof(float));
}

void selectTokenBackward(const float *dy, float *dx, int64_t batch, int64_t seq, int64_t hidden,
                         int64_t index) {
  std::memset(dx, 0, size_t(batch * seq * hidden) * sizeof(float));
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(dx + (b * seq + index) * hidden, dy + b * hidden, size_t(hidden) * sizeof(float));
}

void flattenForward(const float *x, float *out, int64_t batch, int64_t seq, int64_t paddedSeq,
                    int64_t hidden) {
  size_t rowBytes = size_t(seq * hidden) * sizeof(float);
  size_t padBytes = size_t((paddedSeq - seq) * hidden) * sizeof(float);
  for (int64_t b = 0; b < batch; ++b) {
    float *row = out + b * paddedSeq * hidden;
    std::memcpy(row, x + b * seq * hidden, rowBytes);
    std::memset(row + seq * hidden, 0, padBytes);
  }
}

void flattenBackward(const float *dy, float *dx, int64_t batch, int64_t seq, int64_t paddedSeq,
                     int64_t hidden) {
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(dx + b * seq * hidden, dy + b * paddedSeq * hidden,
                size_t(seq * hidden) * sizeof(float));
}

} // namespace bertc::cpu
