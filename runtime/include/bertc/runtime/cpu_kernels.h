// CPU kernels of the bertc runtime: one function per `bert` dialect op, forward and backward.
// Generated CPU trainers call these with pointers into the arena; they are also the reference
// the CUDA kernels are tested against. All tensors are dense row-major fp32 (ids, labels and
// masks int32). A "row" is one token ([B*S] rows) or one sequence ([B] rows).
// Kernels never allocate: scratch space, where needed, is passed in by the caller.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bertc::cpu {

/// out[t, :] = table[ids[t], :] for t < tokens. Ids outside [0, vocab) are a caller error.
void embeddingForward(const int32_t *ids, const float *table, float *out,
                      int64_t tokens, int64_t hidden);
/// dtable = 0; dtable[ids[t], :] += dout[t, :]  (the whole [vocab, hidden] table is written).
void embeddingBackward(const int32_t *ids, const float *dout, float *dtable,
                       int64_t tokens, int64_t vocab, int64_t hidden);

/// out = a + b, elementwise over n values (out may alias a or b).
void add(const float *a, const float *b, float *out, int64_t n);

/// y = (x - mean) / sqrt(var + eps) * gamma + beta over the last dim (biased variance,
/// as torch.nn.LayerNorm).
void layerNormForward(const float *x, const float *gamma, const float *beta, float *y,
                      int64_t rows, int64_t cols, float eps);
/// Writes dx, dgamma, dbeta (dgamma and dbeta are overwritten, not accumulated).
void layerNormBackward(const float *dy, const float *x, const float *gamma, float *dx,
                       float *dgamma, float *dbeta, int64_t rows, int64_t cols, float eps);

/// y[rows, out] = x[rows, in] * w[out, in]^T + b[out]  (torch.nn.Linear layout).
void linearForward(const float *x, const float *w, const float *b, float *y, int64_t rows,
                   int64_t in, int64_t out);
/// dx[rows, in] = dy[rows, out] * w[out, in].
void linearBackwardInput(const float *dy, const float *w, float *dx, int64_t rows,
                         int64_t in, int64_t out);
/// dw[out, in] = dy[rows, out]^T * x[rows, in].
void linearBackwardWeight(const float *dy, const float *x, float *dw, int64_t rows,
                          int64_t in, int64_t out);
/// db[out] = sum over rows of dy[rows, out].
void biasBackward(const float *dy, float *db, int64_t rows, int64_t out);

/// Exact (erf) GELU, as torch.nn.functional.gelu.
void geluForward(const float *x, float *y, int64_t n);
void geluBackward(const float *dy, const float *x, float *dx, int64_t n);

void tanhForward(const float *x, float *y, int64_t n);
/// dx = dy * (1 - y^2), from the forward output y.
void tanhBackward(const float *dy, const float *y, float *dx, int64_t n);

/// Inverted dropout with a counter-based mask: element i is kept when
/// dropoutKeep(seed, step, stream, i, rate); kept values are scaled by 1 / (1 - rate).
/// rate == 0 copies. The mask is never stored: the backward regenerates it.
void dropoutForward(const float *x, float *y, int64_t n, float rate, uint64_t seed,
                    uint64_t step, uint32_t stream);
void dropoutBackward(const float *dy, float *dx, int64_t n, float rate, uint64_t seed,
                     uint64_t step, uint32_t stream);

/// Scratch floats attentionForward/attentionBackward need for sequence length seq.
int64_t attentionScratchFloats(int64_t seq);

/// Multi-head self-attention, q/k/v/ctx [batch, seq, hidden] with heads of hidden/heads dims:
/// ctx = dropout(softmax(q k^T / sqrt(d) + maskBias)) v per head, where maskBias is
/// -FLT_MAX (torch.finfo(float32).min, as Hugging Face BERT) for keys with mask[b, j] == 0.
/// Dropout on the probabilities uses element index ((b * heads + h) * seq + i) * seq + j.
/// No [seq, seq] matrix outlives the call: the backward recomputes the probabilities.
void attentionForward(const float *q, const float *k, const float *v, const int32_t *mask,
                      float *ctx, float *scratch, int64_t batch, int64_t seq, int64_t hidden,
                      int64_t heads, float dropoutRate, uint64_t seed, uint64_t step,
                      uint32_t stream);
/// Writes dq, dk, dv (overwritten) from dctx and the forward inputs.
void attentionBackward(const float *dctx, const float *q, const float *k, const float *v,
                       const int32_t *mask, float *dq, float *dk, float *dv, float *scratch,
                       int64_t batch, int64_t seq, int64_t hidden, int64_t heads,
                       float dropoutRate, uint64_t seed, uint64_t step, uint32_t stream);

/// out[b, :] = x[b, index, :] for x [batch, seq, hidden].
void selectTokenForward(const float *x, float *out, int64_t batch, int64_t seq,
                        int64_t hidden, int64_t index);
/// dx = 0 except dx[b, index, :] = dy[b, :].
void selectTokenBackward(const float *dy, float *dx, int64_t batch, int64_t seq,
                         int64_t hidden, int64_t index);

/// out[b, :] = x[b] laid out token after token, then zeros up to paddedSeq tokens:
/// x [batch, seq, hidden] -> out [batch, paddedSeq * hidden], seq <= paddedSeq.
void flattenForward(const float *x, float *out, int64_t batch, int64_t seq, int64_t paddedSeq,
                    int64_t hidden);
/// dx[b, s, :] = dy[b, s * hidden : (s + 1) * hidden] for s < seq (the padding has none).
void flattenBackward(const float *dy, float *dx, int64_t batch, int64_t seq, int64_t paddedSeq,
                     int64_t hidden);

/// *loss = sum over rows of -log softmax(logits[b])[labels[b]], divided by normalizer
/// (the effective batch size, so micro-batches add up to the mean over the whole batch).
void crossEntropyForward(const float *logits, const int32_t *labels, float *loss,
                         int64_t batch, int64_t classes, float normalizer);
/// dlogits = dloss * (softmax(logits) - onehot(labels)) / normalizer.
void crossEntropyBackward(const float *dloss, const float *logits, const int32_t *labels,
                          float *dlogits, int64_t batch, int64_t classes, float normalizer);

/// grad += g over n values (gradient accumulation into a parameter's gradient slot).
void accumulate(const float *g, float *grad, int64_t n);

/// Hyper-parameters of one AdamW update, as torch.optim.AdamW takes them: in double, as
/// Python floats are, since torch derives 1 - beta, lr * wd and the bias corrections in double.
struct AdamWConfig {
  double lr;
  double beta1;
  double beta2;
  double eps;
  double weightDecay; ///< 0 for parameters excluded from decay (biases, LayerNorm).
  int64_t step;       ///< 1-based optimizer step, for bias correction.
};
/// torch.optim.AdamW on n values: p *= 1 - lr*wd; m = b1 m + (1-b1) g;
/// v = b2 v + (1-b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
void adamwUpdate(float *param, const float *grad, float *m, float *v, int64_t n,
                 const AdamWConfig &config);

} // namespace bertc::cpu
