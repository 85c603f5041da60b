// Elementwise CPU kernels: add, mul, scale, GELU (erf and tanh forms), SiLU, tanh, ReLU and
// counter-based dropout. Loops over contiguous arrays of the storage type, computing in fp32,
// split in fixed chunks over the threads (parallel.h) but for tanh's, the pooler's few
// [batch, hidden] values; the erf GELU's erf and exp are vector_math.h's, so its loops
// vectorise; the tanh GELU's formula is gelu_tanh.h's, which the CUDA kernels share.
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/gelu_tanh.h"

#include "dropout_draws.h"
#include "parallel.h"
#include "storage_types.h"
#include "vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace bertc::cpu {

namespace {
constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;
} // namespace

template <typename T> void add(const T *a, const T *b, T *out, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = fromFloat<T>(toFloat(a[i]) + toFloat(b[i]));
  });
}

template <typename T> void mul(const T *a, const T *b, T *out, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = fromFloat<T>(toFloat(a[i]) * toFloat(b[i]));
  });
}

template <typename T> void scale(const T *x, T *out, float factor, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = fromFloat<T>(toFloat(x[i]) * factor);
  });
}

template <typename T> void siluForward(const T *x, T *y, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float xi = toFloat(x[i]);
      y[i] = fromFloat<T>(xi / (1.0f + std::exp(-xi)));
    }
  });
}

// d/dx [x s(x)] = s + x s (1 - s) = s (1 + x (1 - s)), s the logistic sigmoid.
template <typename T> void siluBackward(const T *dy, const T *x, T *dx, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float xi = toFloat(x[i]);
      const float s = 1.0f / (1.0f + std::exp(-xi));
      dx[i] = fromFloat<T>(toFloat(dy[i]) * (s * (1.0f + xi * (1.0f - s))));
    }
  });
}

template <typename T> void geluForward(const T *x, T *y, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float xi = toFloat(x[i]);
      y[i] = fromFloat<T>(xi * 0.5f * (1.0f + vectorErf(xi * kInvSqrt2)));
    }
  });
}

// d/dx [x Φ(x)] = Φ(x) + x φ(x), with Φ the standard normal CDF and φ its density; erf's
// e^(-(x/√2)^2) is φ's e^(-x^2/2), computed once.
template <typename T> void geluBackward(const T *dy, const T *x, T *dx, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float xi = toFloat(x[i]);
      const float gaussian = vectorExp(-0.5f * xi * xi);
      const float cdf = 0.5f * (1.0f + vectorErf(xi * kInvSqrt2, gaussian));
      const float pdf = gaussian * kInvSqrt2Pi;
      dx[i] = fromFloat<T>(toFloat(dy[i]) * (cdf + xi * pdf));
    }
  });
}

template <typename T> void geluTanhForward(const T *x, T *y, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = fromFloat<T>(geluTanh(toFloat(x[i])));
  });
}

template <typename T> void geluTanhBackward(const T *dy, const T *x, T *dx, int64_t n) {
  forEachChunk(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      dx[i] = fromFloat<T>(toFloat(dy[i]) * geluTanhDerivative(toFloat(x[i])));
  });
}

template <typename T> void tanhForward(const T *x, T *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = fromFloat<T>(std::tanh(toFloat(x[i])));
}

template <typename T> void tanhBackward(const T *dy, const T *y, T *dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float yi = toFloat(y[i]);
    dx[i] = fromFloat<T>(toFloat(dy[i]) * (1.0f - yi * yi));
  }
}

template <typename T> void reluForward(const T *x, T *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = fromFloat<T>(std::max(toFloat(x[i]), 0.0f));
}

template <typename T> void reluBackward(const T *dy, const T *y, T *dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dx[i] = fromFloat<T>(toFloat(y[i]) > 0.0f ? toFloat(dy[i]) : 0.0f);
}

// Calls apply(offset, factor, n) for spans of [rows, rowSize] that cover it: elements
// offset .. offset + n - 1, which dropout at `rate` multiplies by factor[0 .. n - 1]. A row's
// elements are keyed by their index in it, so rows split into spans that threads draw alone
// (dropout_draws.h).
template <typename ApplySpan>
static void forEachDropoutSpan(int64_t rows, int64_t rowSize, float rate, const DropoutKey &key,
                               const ApplySpan &apply) {
  const int64_t spansPerRow = (rowSize + kElementwiseChunk - 1) / kElementwiseChunk;
  forEachChunk(rows * spansPerRow, 1, [&](int64_t span, int64_t) {
    const int64_t row = span / spansPerRow, first = (span % spansPerRow) * kElementwiseChunk;
    forEachDropoutFactorSpan(key, row, uint64_t(first),
                             std::min(kElementwiseChunk, rowSize - first), rate,
                             [&](int64_t j0, const float *factor, int64_t n) {
                               apply(row * rowSize + first + j0, factor, n);
                             });
  });
}

// A dropped element is 0 whatever it held (inf and NaN too), as on the GPU.
static float dropped(float x, float factor) { return factor != 0.0f ? x * factor : 0.0f; }

// Forward and backward are the same map (multiply by the scaled mask), so both call this.
template <typename T>
static void applyDropoutMask(const T *in, T *out, int64_t rows, int64_t rowSize, float rate,
                             const DropoutKey &key) {
  if (rate == 0.0f) {
    if (in != out)
      std::memcpy(out, in, size_t(rows * rowSize) * sizeof(T));
    return;
  }
  forEachDropoutSpan(rows, rowSize, rate, key, [&](int64_t offset, const float *factor, int64_t n) {
    const T *x = in + offset;
    T *y = out + offset;
    for (int64_t t = 0; t < n; ++t)
      y[t] = fromFloat<T>(dropped(toFloat(x[t]), factor[t]));
  });
}

template <typename T>
void dropoutForward(const T *x, T *y, int64_t rows, int64_t rowSize, float rate,
                    const DropoutKey &key) {
  applyDropoutMask(x, y, rows, rowSize, rate, key);
}

template <typename T>
void dropoutBackward(const T *dy, T *dx, int64_t rows, int64_t rowSize, float rate,
                     const DropoutKey &key) {
  applyDropoutMask(dy, dx, rows, rowSize, rate, key);
}

template <typename T>
void dropoutAdd(const T *x, const T *residual, T *sum, int64_t rows, int64_t rowSize, float rate,
                const DropoutKey &key) {
  if (rate == 0.0f) {
    add(x, residual, sum, rows * rowSize);
    return;
  }
  forEachDropoutSpan(rows, rowSize, rate, key, [&](int64_t offset, const float *factor, int64_t n) {
    const T *xs = x + offset, *rs = residual + offset;
    T *out = sum + offset;
    // The dropped value is rounded to T before the add, as dropoutForward stores it.
    for (int64_t t = 0; t < n; ++t)
      out[t] =
          fromFloat<T>(toFloat(fromFloat<T>(dropped(toFloat(xs[t]), factor[t]))) + toFloat(rs[t]));
  });
}

#define INSTANTIATE(T)                                                                             \
  template void add(const T *, const T *, T *, int64_t);                                           \
  template void mul(const T *, const T *, T *, int64_t);                                           \
  template void scale(const T *, T *, float, int64_t);                                             \
  template void siluForward(const T *, T *, int64_t);                                              \
  template void siluBackward(const T *, const T *, T *, int64_t);                                  \
  template void geluForward(const T *, T *, int64_t);                                              \
  template void geluBackward(const T *, const T *, T *, int64_t);                                  \
  template void geluTanhForward(const T *, T *, int64_t);                                          \
  template void geluTanhBackward(const T *, const T *, T *, int64_t);                              \
  template void tanhForward(const T *, T *, int64_t);                                              \
  template void tanhBackward(const T *, const T *, T *, int64_t);                                  \
  template void reluForward(const T *, T *, int64_t);                                              \
  template void reluBackward(const T *, const T *, T *, int64_t);                                  \
  template void dropoutForward(const T *, T *, int64_t, int64_t, float, const DropoutKey &);       \
  template void dropoutBackward(const T *, T *, int64_t, int64_t, float, const DropoutKey &);      \
  template void dropoutAdd(const T *, const T *, T *, int64_t, int64_t, float, const DropoutKey &);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
