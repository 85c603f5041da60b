// Elementwise CPU kernels: add, GELU, tanh, ReLU, counter-based dropout, the token selection a
// classification head uses (BERT's pooler reads token 0) and the flatten of a custom head.
// Loops over contiguous arrays of the storage type, computing in fp32, split in fixed chunks
// over the threads (parallel.h) but for tanh's, the pooler's few [batch, hidden] values;
// GELU's erf and exp are vector_math.h's, so its loops vectorise.
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"

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

template <typename T>
void selectTokenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t hidden,
                        int64_t index) {
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(out + b * hidden, x + (b * seq + index) * hidden, size_t(hidden) * sizeof(T));
}

template <typename T>
void selectTokenBackward(const T *dy, T *dx, int64_t batch, int64_t seq, int64_t hidden,
                         int64_t index) {
  std::memset(dx, 0, size_t(batch * seq * hidden) * sizeof(T));
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(dx + (b * seq + index) * hidden, dy + b * hidden, size_t(hidden) * sizeof(T));
}

namespace {
/// The count of a row's real tokens, at least 1 (a row without any averages to zeros).
float realTokens(const int32_t *mask, int64_t seq) {
  int64_t count = 0;
  for (int64_t s = 0; s < seq; ++s)
    count += mask[s] != 0;
  return float(std::max<int64_t>(count, 1));
}
} // namespace

template <typename T>
void meanTokensForward(const T *x, const int32_t *mask, T *out, int64_t batch, int64_t seq,
                       int64_t hidden) {
  // Each value's tokens summed in order, as the CUDA kernel sums them (the same bits).
  for (int64_t b = 0; b < batch; ++b) {
    const float count = realTokens(mask + b * seq, seq);
    for (int64_t h = 0; h < hidden; ++h) {
      float sum = 0.0f;
      for (int64_t s = 0; s < seq; ++s)
        if (mask[b * seq + s] != 0)
          sum += toFloat(x[(b * seq + s) * hidden + h]);
      out[b * hidden + h] = fromFloat<T>(sum / count);
    }
  }
}

template <typename T>
void meanTokensBackward(const T *dy, const int32_t *mask, T *dx, int64_t batch, int64_t seq,
                        int64_t hidden) {
  for (int64_t b = 0; b < batch; ++b) {
    const float count = realTokens(mask + b * seq, seq);
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t h = 0; h < hidden; ++h)
        dx[(b * seq + s) * hidden + h] =
            fromFloat<T>(mask[b * seq + s] != 0 ? toFloat(dy[b * hidden + h]) / count : 0.0f);
  }
}

template <typename T>
void flattenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t paddedSeq,
                    int64_t hidden) {
  size_t rowBytes = size_t(seq * hidden) * sizeof(T);
  size_t padBytes = size_t((paddedSeq - seq) * hidden) * sizeof(T);
  for (int64_t b = 0; b < batch; ++b) {
    T *row = out + b * paddedSeq * hidden;
    std::memcpy(row, x + b * seq * hidden, rowBytes);
    std::memset(row + seq * hidden, 0, padBytes);
  }
}

template <typename T>
void flattenBackward(const T *dy, T *dx, int64_t batch, int64_t seq, int64_t paddedSeq,
                     int64_t hidden) {
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(dx + b * seq * hidden, dy + b * paddedSeq * hidden,
                size_t(seq * hidden) * sizeof(T));
}

#define INSTANTIATE(T)                                                                             \
  template void add(const T *, const T *, T *, int64_t);                                           \
  template void geluForward(const T *, T *, int64_t);                                              \
  template void geluBackward(const T *, const T *, T *, int64_t);                                  \
  template void tanhForward(const T *, T *, int64_t);                                              \
  template void tanhBackward(const T *, const T *, T *, int64_t);                                  \
  template void reluForward(const T *, T *, int64_t);                                              \
  template void reluBackward(const T *, const T *, T *, int64_t);                                  \
  template void dropoutForward(const T *, T *, int64_t, int64_t, float, const DropoutKey &);       \
  template void dropoutBackward(const T *, T *, int64_t, int64_t, float, const DropoutKey &);      \
  template void dropoutAdd(const T *, const T *, T *, int64_t, int64_t, float,                     \
                           const DropoutKey &);                                                    \
  template void selectTokenForward(const T *, T *, int64_t, int64_t, int64_t, int64_t);            \
  template void meanTokensForward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t);     \
  template void meanTokensBackward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t);    \
  template void selectTokenBackward(const T *, T *, int64_t, int64_t, int64_t, int64_t);           \
  template void flattenForward(const T *, T *, int64_t, int64_t, int64_t, int64_t);                \
  template void flattenBackward(const T *, T *, int64_t, int64_t, int64_t, int64_t);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
