// Internal to the CPU attention kernels (attention.cpp, the fused one, and
// chunked_attention.cpp, the tensor-core twin): the shape of one call, the mask bias, the
// dropout decisions of a query row, the per-head products of rows and the backward's row
// term, which both must compute alike so that they agree with each other and with CUDA.
#pragma once

#include "bertc/runtime/counter_rng.h"

#include "dropout_draws.h"
#include "mixed_gemm.h"

#include <cfloat>
#include <cstdint>

namespace bertc::cpu {

/// The shape of one attention call and the offsets of one (batch, head) slice in it.
struct AttentionShape {
  int64_t batch, seq, hidden, heads;

  int64_t headDim() const { return hidden / heads; }
  /// Offset of head h of sequence b in a [batch, seq, hidden] tensor.
  int64_t headOffset(int64_t b, int64_t h) const { return b * seq * hidden + h * headDim(); }
  /// Dropout index, within row b of the batch, of probability (i, 0) of head h.
  uint64_t dropoutIndexInRow(int64_t h, int64_t i) const { return attentionDropoutIndex(h, i, 0); }
  /// Index of query row i of head h of sequence b in a [batch, heads, seq] statistic.
  int64_t statIndex(int64_t b, int64_t h, int64_t i) const { return (b * heads + h) * seq + i; }
};

/// Query rows of one (batch, head) that one thread takes at a time.
constexpr int64_t kQueryRowBlock = 32;

/// The additive mask of a key: -FLT_MAX (torch.finfo(float32).min) where its mask is 0.
inline float keyMaskBias(int32_t keyMask) { return keyMask == 0 ? -FLT_MAX : 0.0f; }

/// Calls visit(j0, factor, n) for spans of the keys of query row i of head h of sequence b:
/// factor[t] is what dropout multiplies probability (i, j0 + t) by, 1 / (1 - rate) or 0. The
/// row's dropout indices are consecutive (dropout_draws.h).
template <typename VisitSpan>
void forEachRowFactorSpan(const DropoutKey &key, const AttentionShape &shape, int64_t b, int64_t h,
                          int64_t i, float rate, const VisitSpan &visit) {
  forEachDropoutFactorSpan(key, b, shape.dropoutIndexInRow(h, i), shape.seq, rate, visit);
}

/// Rows [rowBegin, rowEnd) of alpha x_h y_h^T for head h of sequence b of the
/// [batch, seq, hidden] tensors x and y (q k^T, dctx v^T), into those rows of out
/// ([seq, seq], fp32).
template <typename T>
void headProductRows(const T *x, const T *y, float alpha, float *out, const AttentionShape &shape,
                     int64_t b, int64_t h, int64_t rowBegin, int64_t rowEnd) {
  const int64_t offset = shape.headOffset(b, h), ld = shape.hidden;
  mixedGemm(false, true, rowEnd - rowBegin, shape.seq, shape.headDim(), alpha,
            x + offset + rowBegin * ld, ld, y + offset, ld, 0.0f, out + rowBegin * shape.seq,
            shape.seq);
}

/// dctx_i · ctx_i over the head's dims: the backward's row term r_i = sum_j P_ij dP_ij.
template <typename T>
float rowTerm(const T *dctx, const T *ctx, const AttentionShape &shape, int64_t b, int64_t h,
              int64_t i) {
  const int64_t offset = shape.headOffset(b, h) + i * shape.hidden;
  float sum = 0.0f;
  for (int64_t c = 0; c < shape.headDim(); ++c)
    sum += toFloat(dctx[offset + c]) * toFloat(ctx[offset + c]);
  return sum;
}

} // namespace bertc::cpu
