// Internal to the CPU attention kernels (attention.cpp, the fused one, and
// chunked_attention.cpp, the tensor-core twin): the shape of one call, the mask bias, the
// dropout decisions of a query row, the per-head products of rows and the backward's row
// term, which both must compute alike so that they agree with each other and with CUDA.
#pragma once

#include "bertc/runtime/attention_heads.h"
#include "bertc/runtime/counter_rng.h"

#include "dropout_draws.h"
#include "mixed_gemm.h"

#include <cfloat>
#include <cstdint>

namespace bertc::cpu {

/// The shape of one attention call and the offsets of one (batch, head) slice in it: the
/// query-shaped tensors (q, ctx, dctx, dq) are [batch, seq, hidden], the key-shaped ones
/// (k, v, dk, dv) [batch, seq, kvHeads * headDim].
struct AttentionShape {
  int64_t batch, seq, hidden, heads, kvHeads;
  bool causal;

  AttentionShape(int64_t batchSize, int64_t seqLen, int64_t hiddenSize, const AttentionHeads &h)
      : batch(batchSize), seq(seqLen), hidden(hiddenSize), heads(h.heads), kvHeads(h.kvHeads),
        causal(h.causal) {}

  int64_t headDim() const { return hidden / heads; }
  int64_t kvHidden() const { return kvHeads * headDim(); }
  /// Query heads per key/value head.
  int64_t group() const { return heads / kvHeads; }
  /// Offset of head h of sequence b in a query-shaped tensor.
  int64_t headOffset(int64_t b, int64_t h) const { return b * seq * hidden + h * headDim(); }
  /// Offset of the key/value head that query head h reads, of sequence b, in a key-shaped
  /// tensor.
  int64_t kvHeadOffset(int64_t b, int64_t h) const {
    return b * seq * kvHidden() + h / group() * headDim();
  }
  /// The keys [0, keyEnd) the query rows before rowEnd reach (with causal, those before it).
  int64_t keyEnd(int64_t rowEnd) const { return causal ? rowEnd : seq; }
  /// The first query row that reaches key keyBegin (with causal, keyBegin itself).
  int64_t firstQuery(int64_t keyBegin) const { return causal ? keyBegin : 0; }
  /// Dropout index, within row b of the batch, of probability (i, 0) of head h.
  uint64_t dropoutIndexInRow(int64_t h, int64_t i) const { return attentionDropoutIndex(h, i, 0); }
  /// Index of query row i of head h of sequence b in a [batch, heads, seq] statistic.
  int64_t statIndex(int64_t b, int64_t h, int64_t i) const { return (b * heads + h) * seq + i; }
};

/// Query rows of one (batch, head) that one thread takes at a time.
constexpr int64_t kQueryRowBlock = 32;

/// The additive mask of a key: -FLT_MAX (torch.finfo(float32).min) where its mask is 0.
inline float keyMaskBias(int32_t keyMask) { return keyMask == 0 ? -FLT_MAX : 0.0f; }

/// Calls body(reach, bias) for query row i of sequence b: the row reaches keys [0, reach)
/// (all of them, or with causal 0 to i, the later ones having probability 0), and bias(j)
/// is key j's additive mask for it: keyMaskBias, and with causal -FLT_MAX for a key of
/// another document. The two masks are two instantiations of the body, so the plain one's
/// loops stay branch-free.
template <typename Body>
void withRowMask(const AttentionShape &shape, const int32_t *mask, int64_t b, int64_t i,
                 const Body &body) {
  const int32_t *keyMask = mask + b * shape.seq;
  if (!shape.causal) {
    body(shape.seq, [keyMask](int64_t j) { return keyMaskBias(keyMask[j]); });
    return;
  }
  const int32_t document = keyMask[i];
  body(i + 1, [keyMask, document](int64_t j) {
    return keyMask[j] != 0 && keyMask[j] == document ? 0.0f : -FLT_MAX;
  });
}

/// Calls visit(j0, factor, n) for spans of keys [0, keys) of query row i of head h of
/// sequence b: factor[t] is what dropout multiplies probability (i, j0 + t) by, 1 / (1 - rate)
/// or 0. The row's dropout indices are consecutive (dropout_draws.h).
template <typename VisitSpan>
void forEachRowFactorSpan(const DropoutKey &key, const AttentionShape &shape, int64_t b, int64_t h,
                          int64_t i, int64_t keys, float rate, const VisitSpan &visit) {
  forEachDropoutFactorSpan(key, b, shape.dropoutIndexInRow(h, i), keys, rate, visit);
}

/// Rows [rowBegin, rowEnd) of alpha x_h y_h^T for head h of sequence b, x query-shaped and y
/// key-shaped (q k^T, dctx v^T, y's head the one h reads), over the keys those rows reach
/// (keyEnd), into those rows of out ([seq, seq], fp32).
template <typename T>
void headProductRows(const T *x, const T *y, float alpha, float *out, const AttentionShape &shape,
                     int64_t b, int64_t h, int64_t rowBegin, int64_t rowEnd) {
  const int64_t ld = shape.hidden, kvLd = shape.kvHidden();
  mixedGemm(false, true, rowEnd - rowBegin, shape.keyEnd(rowEnd), shape.headDim(), alpha,
            x + shape.headOffset(b, h) + rowBegin * ld, ld, y + shape.kvHeadOffset(b, h), kvLd,
            0.0f, out + rowBegin * shape.seq, shape.seq);
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
