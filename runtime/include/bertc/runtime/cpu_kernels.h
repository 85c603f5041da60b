// CPU kernels of the bertc runtime: one function per `bert` dialect op, forward and backward.
// Generated CPU trainers call these with pointers into the arena; they are also the reference
// the CUDA kernels are tested against. All tensors are dense row-major (ids, labels and
// masks int32). A "row" is one token ([B*S] rows) or one sequence ([B] rows).
// Kernels templated on a storage type T are instantiated for float, bf16 and fp16
// (half_types.h): they load T, compute in fp32 (GEMMs accumulate in fp32, LayerNorm
// statistics in double) and round once on store. Weight gradients are always fp32.
// Kernels never allocate: scratch space, where needed, is passed in by the caller.
#pragma once

#include "bertc/abi/adamw_8bit_state.h"
#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/attention_heads.h"
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_quantized_weight.h"
#include "bertc/runtime/half_types.h"

#include <cstddef>
#include <cstdint>

namespace bertc::cpu {

/// out[t, :] = table[ids[t], :] for t < tokens. Ids outside [0, vocab) are a caller error.
template <typename T>
void embeddingForward(const int32_t *ids, const T *table, T *out, int64_t tokens, int64_t hidden);
/// dtable = 0; dtable[ids[t], :] += dout[t, :]  (the whole [vocab, hidden] table is written),
/// except for the tokens whose id is paddingIdx (-1: none), whose row stays zero.
template <typename T>
void embeddingBackward(const int32_t *ids, const T *dout, float *dtable, int64_t tokens,
                       int64_t vocab, int64_t hidden, int64_t paddingIdx);
/// dtable[ids[t], :] += dout[t, :] in token order, dtable as it is (a gradient slot); the
/// row paddingIdx is left as it is.
template <typename T>
void embeddingBackwardAccumulate(const int32_t *ids, const T *dout, float *dtable, int64_t tokens,
                                 int64_t vocab, int64_t hidden, int64_t paddingIdx);

/// out = a + b, elementwise over n values (out may alias a or b).
template <typename T> void add(const T *a, const T *b, T *out, int64_t n);

/// y = (x - mean) / sqrt(var + eps) * gamma + beta over the last dim (biased variance,
/// as torch.nn.LayerNorm).
template <typename T>
void layerNormForward(const T *x, const T *gamma, const T *beta, T *y, int64_t rows, int64_t cols,
                      float eps);
/// Writes dx, dgamma, dbeta (dgamma and dbeta are overwritten, not accumulated).
template <typename T>
void layerNormBackward(const T *dy, const T *x, const T *gamma, T *dx, float *dgamma, float *dbeta,
                       int64_t rows, int64_t cols, float eps);
/// The same, with dgamma and dbeta added to what they hold (gradient slots): each total is
/// formed first and then added, so they get the bits layerNormBackward then an add give.
template <typename T>
void layerNormBackwardAccumulate(const T *dy, const T *x, const T *gamma, T *dx, float *dgamma,
                                 float *dbeta, int64_t rows, int64_t cols, float eps);

/// y[rows, out] = x[rows, in] * w[out, in]^T + b[out]  (torch.nn.Linear layout); b may be
/// null (a linear without bias).
template <typename T>
void linearForward(const T *x, const T *w, const T *b, T *y, int64_t rows, int64_t in, int64_t out);
/// dx[rows, in] = dy[rows, out] * w[out, in].
template <typename T>
void linearBackwardInput(const T *dy, const T *w, T *dx, int64_t rows, int64_t in, int64_t out);
/// dx[rows, in] = dy[rows, out] * w[out, in] + addend[rows, in], rounded once (sgemm with
/// beta = 1 over a copy of the addend; dx may be the addend).
template <typename T>
void linearBackwardInputAdd(const T *dy, const T *w, const T *addend, T *dx, int64_t rows,
                            int64_t in, int64_t out);
/// dw[out, in] = dy[rows, out]^T * x[rows, in].
template <typename T>
void linearBackwardWeight(const T *dy, const T *x, float *dw, int64_t rows, int64_t in,
                          int64_t out);
/// dw[out, in] += dy[rows, out]^T * x[rows, in]: sgemm with beta = 1 into a gradient slot.
template <typename T>
void linearBackwardWeightAccumulate(const T *dy, const T *x, float *dw, int64_t rows, int64_t in,
                                    int64_t out);
/// db[out] = sum over rows of dy[rows, out].
template <typename T> void biasBackward(const T *dy, float *db, int64_t rows, int64_t out);
/// db[out] += the same sum, formed first and then added (a gradient slot).
template <typename T>
void biasBackwardAccumulate(const T *dy, float *db, int64_t rows, int64_t out);

/// out = a * b, elementwise over n values (out may alias a or b).
template <typename T> void mul(const T *a, const T *b, T *out, int64_t n);
/// out = x * factor, in fp32 and rounded once (out may alias x).
template <typename T> void scale(const T *x, T *out, float factor, int64_t n);

/// SiLU, y = x * sigmoid(x) = x / (1 + e^-x), as torch.nn.functional.silu.
template <typename T> void siluForward(const T *x, T *y, int64_t n);
/// dx = dy * s * (1 + x * (1 - s)) with s = sigmoid(x) (dx may be dy).
template <typename T> void siluBackward(const T *dy, const T *x, T *dx, int64_t n);

/// RMSNorm over the last dim, as transformers' LlamaRMSNorm: y = weight * round(x * r) with
/// r = 1 / sqrt(mean(x^2) + eps) per row (in double) and round() to T.
template <typename T>
void rmsNormForward(const T *x, const T *weight, T *y, int64_t rows, int64_t cols, float eps);
/// Writes dx = r (w dy - x r^2 mean(w dy x)) and dweight (overwritten, fp32) = the sum over
/// rows of dy * round(x * r), r recomputed from x.
template <typename T>
void rmsNormBackward(const T *dy, const T *x, const T *weight, T *dx, float *dweight, int64_t rows,
                     int64_t cols, float eps);

/// Rotary embedding of [tokens, heads * headDim] x at positions[tokens], as transformers'
/// apply_rotary_pos_emb with rotate_half: in each head, for i < headDim / 2 and the angle
/// a = float(position) * invFreq[i] (fp32), y[i] = x[i] cos a - x[i + headDim/2] sin a and
/// y[i + headDim/2] = x[i + headDim/2] cos a + x[i] sin a, in fp32 rounded once (y may be x).
template <typename T>
void ropeForward(const T *x, const int32_t *positions, T *y, int64_t tokens, int64_t heads,
                 int64_t headDim, const float *invFreq);
/// dx = the rotation of dy by -a (dx may be dy).
template <typename T>
void ropeBackward(const T *dy, const int32_t *positions, T *dx, int64_t tokens, int64_t heads,
                  int64_t headDim, const float *invFreq);

/// The causal-LM loss of a bias-less LM head over [tokens, width] hidden states and a
/// [vocab, width] weight (bert.lm_head_loss), tokenChunk tokens at a time: each chunk's
/// logits hidden weight^T into the fp32 block at the start of `workspace`
/// (bertc/abi/lm_head_loss.h), then per token the fp32 log-sum-exp and the loss
/// lse - logit[label] (0 for a label outside [0, vocab)) after the block;
/// *loss = their sum in token order (in double) / normalizer.
template <typename T>
void lmHeadLossForward(const T *hidden, const T *weight, const int32_t *labels, float *loss,
                       float *workspace, int64_t tokens, int64_t width, int64_t vocab,
                       int64_t tokenChunk, float normalizer);
/// Per chunk, the logits recomputed into the block and rewritten in place as
/// dlogits = (softmax - onehot(label)) * *dloss / normalizer rounded to T (zero for an ignored
/// label), then dhidden[chunk] = dlogits weight and dweight (fp32) += dlogits^T
/// hidden[chunk]: dweight is overwritten (null: not computed, a frozen weight).
template <typename T>
void lmHeadLossBackward(const float *dloss, const T *hidden, const T *weight, const int32_t *labels,
                        T *dhidden, float *dweight, float *workspace, int64_t tokens, int64_t width,
                        int64_t vocab, int64_t tokenChunk, float normalizer);
/// The same with dweight added to what it holds (the weight's gradient slot).
template <typename T>
void lmHeadLossBackwardAccumulate(const float *dloss, const T *hidden, const T *weight,
                                  const int32_t *labels, T *dhidden, float *dweight,
                                  float *workspace, int64_t tokens, int64_t width, int64_t vocab,
                                  int64_t tokenChunk, float normalizer);

/// Exact (erf) GELU, as torch.nn.functional.gelu.
template <typename T> void geluForward(const T *x, T *y, int64_t n);
template <typename T> void geluBackward(const T *dy, const T *x, T *dx, int64_t n);
/// GELU's tanh approximation, as torch.nn.functional.gelu(approximate="tanh") (gelu_tanh.h),
/// and dx = dy * its derivative at x.
template <typename T> void geluTanhForward(const T *x, T *y, int64_t n);
template <typename T> void geluTanhBackward(const T *dy, const T *x, T *dx, int64_t n);

template <typename T> void tanhForward(const T *x, T *y, int64_t n);
/// dx = dy * (1 - y^2), from the forward output y.
template <typename T> void tanhBackward(const T *dy, const T *y, T *dx, int64_t n);

template <typename T> void reluForward(const T *x, T *y, int64_t n);
/// dx = dy where y > 0, else 0, from the forward output y (0 at x = 0, as PyTorch).
template <typename T> void reluBackward(const T *dy, const T *y, T *dx, int64_t n);

/// Inverted dropout with a counter-based mask over [rows, rowSize]: element i of row r is
/// kept when dropoutKeep(key, r, i, rate); kept values are scaled by 1 / (1 - rate).
/// rate == 0 copies. The mask is never stored: the backward regenerates it.
template <typename T>
void dropoutForward(const T *x, T *y, int64_t rows, int64_t rowSize, float rate,
                    const DropoutKey &key);
template <typename T>
void dropoutBackward(const T *dy, T *dx, int64_t rows, int64_t rowSize, float rate,
                     const DropoutKey &key);
/// sum = dropoutForward(x) + residual over [rows, rowSize] in one pass, the dropped value
/// rounded to T before the add: the bits of dropoutForward then add. sum may be x or
/// residual.
template <typename T>
void dropoutAdd(const T *x, const T *residual, T *sum, int64_t rows, int64_t rowSize, float rate,
                const DropoutKey &key);

/// Multi-head self-attention, q/ctx [batch, seq, hidden] with heads.heads heads of
/// d = hidden / heads.heads dims, k/v [batch, seq, heads.kvHeads * d] (query head h reads
/// key/value head h / heads.group(), attention_heads.h): ctx = dropout(softmax(q k^T /
/// sqrt(d) + maskBias)) v per head, where maskBias is -FLT_MAX (torch.finfo(float32).min, as
/// Hugging Face BERT) for keys with mask[b, j] == 0 and, with heads.causal, for keys of
/// another document (mask[b, j] != mask[b, i]); keys after the query (j > i) are not seen at
/// all. Dropout on the probabilities keys element (b, h, i, j) by row b and index
/// attentionDropoutIndex(h, i, j) (counter_rng.h), whatever seq the batch is padded to. lse
/// [batch, heads, seq] gets each query row's log-sum-exp of its masked scores (-FLT_MAX for a
/// row with every key masked, whose probabilities are uniform over the keys it reaches). No
/// [seq, seq] matrix outlives the call: the backward recomputes the probabilities from lse.
/// `scratch` holds attentionScratchFloats(seq, d where kvHeads < heads, else 0) floats.
template <typename T>
void attentionForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                      float *scratch, int64_t batch, int64_t seq, int64_t hidden,
                      AttentionHeads heads, float dropoutRate, const DropoutKey &key);
/// Writes dq, dk, dv (overwritten; dk and dv key-shaped, each key/value head's the sum over
/// its group of query heads) from dctx, the forward inputs, its output ctx and lse.
template <typename T>
void attentionBackward(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                       const T *ctx, const float *lse, T *dq, T *dk, T *dv, float *scratch,
                       int64_t batch, int64_t seq, int64_t hidden, AttentionHeads heads,
                       float dropoutRate, const DropoutKey &key);

/// The same attention by GEMMs over whole [seq, seq] matrices, headChunk heads at a time
/// (an attention op with head_chunk > 0, a multiple of heads.group()): the CUDA trainer's
/// tensor-core attention step for step (cuda_chunked_attention.h describes the steps), with
/// its score blocks in `workspace` (attentionForwardWorkspaceBytes /
/// attentionBackwardWorkspaceBytes, abi/kernel_workspace.h). P*Z and dS are rounded to T
/// before their products, as the CUDA kernels do.
template <typename T>
void chunkedAttentionForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx,
                             float *lse, float *workspace, int64_t headChunk, int64_t batch,
                             int64_t seq, int64_t hidden, AttentionHeads heads, float dropoutRate,
                             const DropoutKey &key);
template <typename T>
void chunkedAttentionBackward(const T *dctx, const T *q, const T *k, const T *v,
                              const int32_t *mask, const T *ctx, const float *lse, float *workspace,
                              T *dq, T *dk, T *dv, int64_t headChunk, int64_t batch, int64_t seq,
                              int64_t hidden, AttentionHeads heads, float dropoutRate,
                              const DropoutKey &key);

/// out[b, :] = x[b, index, :] for x [batch, seq, hidden].
template <typename T>
void selectTokenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t hidden,
                        int64_t index);
/// dx = 0 except dx[b, index, :] = dy[b, :].
template <typename T>
void selectTokenBackward(const T *dy, T *dx, int64_t batch, int64_t seq, int64_t hidden,
                         int64_t index);

/// out[b, :] = the mean of x[b, s, :] over the tokens with mask[b, s] = 1 (zeros for a row
/// without any), for x [batch, seq, hidden] and mask [batch, seq]: mean pooling.
template <typename T>
void meanTokensForward(const T *x, const int32_t *mask, T *out, int64_t batch, int64_t seq,
                       int64_t hidden);
/// dx[b, s, :] = mask[b, s] * dy[b, :] / the row's count of real tokens.
template <typename T>
void meanTokensBackward(const T *dy, const int32_t *mask, T *dx, int64_t batch, int64_t seq,
                        int64_t hidden);

/// out[b, h] = the largest x[b, s, h] over the tokens with mask[b, s] = 1 (NaN when one of
/// them is; zero for a row without any): max pooling.
template <typename T>
void maxTokensForward(const T *x, const int32_t *mask, T *out, int64_t batch, int64_t seq,
                      int64_t hidden);
/// dx = 0 except dx[b, s, h] = dy[b, h] at the first real token s holding that maximum.
template <typename T>
void maxTokensBackward(const T *dy, const T *x, const int32_t *mask, T *dx, int64_t batch,
                       int64_t seq, int64_t hidden);

/// out[b, :] = x[b] laid out token after token, then zeros up to paddedSeq tokens:
/// x [batch, seq, hidden] -> out [batch, paddedSeq * hidden], seq <= paddedSeq.
template <typename T>
void flattenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t paddedSeq,
                    int64_t hidden);
/// dx[b, s, :] = dy[b, s * hidden : (s + 1) * hidden] for s < seq (the padding has none).
template <typename T>
void flattenBackward(const T *dy, T *dx, int64_t batch, int64_t seq, int64_t paddedSeq,
                     int64_t hidden);

/// out[r, :] = x[r, start : start + width] for x [rows, inWidth]: a slice of the last
/// dimension (and a concatenation's gradient of one input).
template <typename T>
void sliceColumns(const T *x, T *out, int64_t rows, int64_t inWidth, int64_t start, int64_t width);
/// out[r, start : start + width] = x[r, :] for out [rows, outWidth], its other columns
/// untouched: one input of a concatenation.
template <typename T>
void placeColumns(const T *x, T *out, int64_t rows, int64_t width, int64_t outWidth, int64_t start);
/// The same with out's other columns zero: a slice's gradient.
template <typename T>
void padColumns(const T *x, T *out, int64_t rows, int64_t width, int64_t outWidth, int64_t start);

/// *loss = sum over rows r of -log softmax(logits[r])[labels[r]], divided by normalizer
/// (the effective batch size, so micro-batches add up to the mean over the whole batch).
/// A row whose label lies outside [0, classes) adds nothing (PyTorch's ignore_index -100).
void crossEntropyForward(const float *logits, const int32_t *labels, float *loss, int64_t batch,
                         int64_t classes, float normalizer);
/// dlogits = dloss * (softmax(logits) - onehot(labels)) / normalizer; 0 for ignored rows.
void crossEntropyBackward(const float *dloss, const float *logits, const int32_t *labels,
                          float *dlogits, int64_t batch, int64_t classes, float normalizer);

/// *loss = sum over rows of (predictions[r] - targets[r])^2, divided by normalizer
/// (torch.nn.MSELoss's mean when normalizer is the effective batch size).
void mseLossForward(const float *predictions, const float *targets, float *loss, int64_t rows,
                    float normalizer);
/// dpredictions = dloss * 2 (predictions - targets) / normalizer.
void mseLossBackward(const float *dloss, const float *predictions, const float *targets,
                     float *dpredictions, int64_t rows, float normalizer);

/// y[b, j, i] = x[b, i, j] for x [batch, m, n] (y is [batch, n, m]; y must not alias x).
void transposeLastTwo(const float *x, float *y, int64_t batch, int64_t m, int64_t n);

/// grad += g over n values (gradient accumulation into a parameter's fp32 gradient slot).
template <typename G> void accumulate(const G *g, float *grad, int64_t n);

/// to[i] = from[i] rounded to To (bert.cast; also the 16-bit working copy of a master weight).
template <typename From, typename To> void convert(const From *from, To *to, int64_t n);

/// Multiplies n fp32 gradients by inverseScale (undoing fp16 loss scaling) and returns
/// whether every one is finite; on false the values are unspecified and the step is skipped.
bool unscaleGradients(float *grad, int64_t n, float inverseScale);

/// The sum of the squares of n fp32 values, accumulated in double: the square of the
/// gradients' global L2 norm.
float squaredNorm(const float *x, int64_t n);
/// torch.nn.utils.clip_grad_norm_'s scaling: grad *= min(1, maxNorm / (sqrt(squaredNorm) +
/// 1e-6)), in fp32 as the CUDA twin computes it.
void clipByGlobalNorm(float *grad, int64_t n, float squaredNorm, float maxNorm);

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
/// The same on the fp32 master of a 16-bit parameter, rounding each updated value into its
/// working copy in the same pass: the bits of adamwUpdate, then convert.
void adamwUpdate(float *master, const float *grad, float *m, float *v, bf16 *working, int64_t n,
                 const AdamWConfig &config);
void adamwUpdate(float *master, const float *grad, float *m, float *v, fp16 *working, int64_t n,
                 const AdamWConfig &config);
/// adamwUpdate on n values whose moments are kept in 8 bits (bitsandbytes' Adam8bit, state
/// layout and bytes in abi/adamw_8bit_state.h): per block of blockSize values (the last
/// may be partial), dequantizes m and v, runs adamwUpdate's operations on them and param,
/// and requantizes them against the block's new absmax (largest |m|, largest v). param is
/// the fp32 parameter. Blocks are counted from param[0]: call it once per parameter, with
/// config.weightDecay 0 for those without decay.
void adamw8bitUpdate(float *param, const float *grad, const AdamW8bitState &state, int64_t n,
                     QuantBlockSize blockSize, const AdamWConfig &config);
/// The same on the fp32 master of a 16-bit parameter, rounding each updated value into its
/// working copy in the same pass: the bits of adamw8bitUpdate, then convert.
void adamw8bitUpdate(float *master, const float *grad, const AdamW8bitState &state, bf16 *working,
                     int64_t n, QuantBlockSize blockSize, const AdamWConfig &config);
void adamw8bitUpdate(float *master, const float *grad, const AdamW8bitState &state, fp16 *working,
                     int64_t n, QuantBlockSize blockSize, const AdamWConfig &config);

} // namespace bertc::cpu
