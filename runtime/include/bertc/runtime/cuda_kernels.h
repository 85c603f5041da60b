// CUDA kernels of the bertc runtime: the device twins of cpu_kernels.h, called by generated
// CUDA trainers with pointers into the device arena. Each launcher takes the CPU twin's
// arguments (same layouts, same meaning, same DropoutKey semantics) plus the stream it is
// queued on; it returns once the work is queued and throws CudaError when the launch fails.
// Kernels templated on a storage type T are instantiated for float, bf16 and fp16: they load
// T, compute in fp32 and round once on store (round to nearest even). Weight gradients are
// always fp32. Where a kernel keeps more than its CPU twin (LayerNorm's row statistics, the
// attention backward's row term) the extra buffer is an explicit argument of stated size:
// kernels never allocate. A few launchers fuse two CPU twins (a backward and the bias
// gradient of what it writes) and give the bits of the two. Reductions run in a fixed
// order, so a rerun gives the same bits. GEMMs are in cuda_gemm.h.
#pragma once

#include "bertc/abi/kernel_workspace.h"
#include "bertc/abi/rope.h"
#include "bertc/runtime/attention_heads.h"
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_quantized_weight.h"
#include "bertc/runtime/half_types.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace bertc::cuda {

// ---- Embedding (embedding.cu) ----

/// out[t, :] = table[ids[t], :] for t < tokens.
template <typename T>
void embeddingForward(const int32_t *ids, const T *table, T *out, int64_t tokens, int64_t hidden,
                      cudaStream_t stream);
/// dtable = 0; dtable[ids[t], :] += dout[t, :]. Deterministic without atomics, in
/// O(tokens * hidden) work whatever the ids: each row's sum runs in an order fixed by the ids,
/// not the CPU twin's token order, so the two agree to fp32 rounding. The row paddingIdx
/// (-1: none) stays zero.
template <typename T>
void embeddingBackward(const int32_t *ids, const T *dout, float *dtable, int64_t tokens,
                       int64_t vocab, int64_t hidden, int64_t paddingIdx, cudaStream_t stream);
/// The same added to dtable as it is (a gradient slot): no zeroing. Each id's rows add
/// into its row tile by tile (kernel tiles of 512 tokens), so with one tile the slot gets
/// the bits of embeddingBackward then an add. The row paddingIdx is left as it is.
template <typename T>
void embeddingBackwardAccumulate(const int32_t *ids, const T *dout, float *dtable, int64_t tokens,
                                 int64_t vocab, int64_t hidden, int64_t paddingIdx,
                                 cudaStream_t stream);

// ---- Elementwise (elementwise.cu) ----

/// out = a + b over n values (out may alias a or b).
template <typename T> void add(const T *a, const T *b, T *out, int64_t n, cudaStream_t stream);
/// out = a * b (out may alias a or b).
template <typename T> void mul(const T *a, const T *b, T *out, int64_t n, cudaStream_t stream);
/// out = x * factor (out may alias x), as cpu::scale.
template <typename T> void scale(const T *x, T *out, float factor, int64_t n, cudaStream_t stream);
/// SiLU and its gradient, as cpu::siluForward and cpu::siluBackward.
template <typename T> void siluForward(const T *x, T *y, int64_t n, cudaStream_t stream);
template <typename T>
void siluBackward(const T *dy, const T *x, T *dx, int64_t n, cudaStream_t stream);
/// Exact (erf) GELU, as torch.nn.functional.gelu.
template <typename T> void geluForward(const T *x, T *y, int64_t n, cudaStream_t stream);
template <typename T>
void geluBackward(const T *dy, const T *x, T *dx, int64_t n, cudaStream_t stream);
/// GELU's tanh approximation and its gradient, as cpu::geluTanhForward and
/// cpu::geluTanhBackward (the same formula: gelu_tanh.h).
template <typename T> void geluTanhForward(const T *x, T *y, int64_t n, cudaStream_t stream);
template <typename T>
void geluTanhBackward(const T *dy, const T *x, T *dx, int64_t n, cudaStream_t stream);
template <typename T> void tanhForward(const T *x, T *y, int64_t n, cudaStream_t stream);
/// dx = dy * (1 - y^2), from the forward output y.
template <typename T>
void tanhBackward(const T *dy, const T *y, T *dx, int64_t n, cudaStream_t stream);
template <typename T> void reluForward(const T *x, T *y, int64_t n, cudaStream_t stream);
/// dx = dy where y > 0, else 0, from the forward output y (0 at x = 0, as PyTorch).
template <typename T>
void reluBackward(const T *dy, const T *y, T *dx, int64_t n, cudaStream_t stream);
/// grad += g over n values (gradient accumulation into an fp32 gradient slot).
template <typename G> void accumulate(const G *g, float *grad, int64_t n, cudaStream_t stream);

// ---- Bias (bias.cu) ----

/// y[r, :] += bias for y [rows, cols] (where a GEMM's epilogue cannot add the bias).
template <typename T>
void biasAdd(T *y, const T *bias, int64_t rows, int64_t cols, cudaStream_t stream);
/// db[out] = sum over rows of dy[rows, out] (overwritten, not accumulated), in one launch
/// through biasBackwardWorkspaceFloats(rows, out) floats of `partials` and the
/// kColumnSumTickets `tickets` (abi/kernel_workspace.h; zero before and after): row slices
/// summed by many blocks, then the slices added by the last, each in a fixed order.
template <typename T>
void biasBackward(const T *dy, float *db, float *partials, unsigned *tickets, int64_t rows,
                  int64_t out, cudaStream_t stream);
/// db[out] += the same sum, formed first and then added (a gradient slot; the bits of
/// biasBackward then accumulate).
template <typename T>
void biasBackwardAccumulate(const T *dy, float *db, float *partials, unsigned *tickets,
                            int64_t rows, int64_t out, cudaStream_t stream);

// ---- Backwards fused with a bias gradient (bias_fused.cu) ----

/// geluBackward over dx [rows, cols], and db[cols] = dx summed over rows, in one launch
/// (through `partials` and `tickets`, as biasBackward): dx and db get the bits of
/// geluBackward then biasBackward. dx may be dy.
template <typename T>
void geluBackwardBias(const T *dy, const T *x, T *dx, float *db, float *partials, unsigned *tickets,
                      int64_t rows, int64_t cols, cudaStream_t stream);
/// The same with db[cols] += the sum: the bits of geluBackward then biasBackwardAccumulate.
template <typename T>
void geluBackwardBiasAccumulate(const T *dy, const T *x, T *dx, float *db, float *partials,
                                unsigned *tickets, int64_t rows, int64_t cols, cudaStream_t stream);
/// geluBackwardBias and geluBackwardBiasAccumulate for GELU's tanh approximation: the bits of
/// geluTanhBackward then biasBackward or biasBackwardAccumulate.
template <typename T>
void geluTanhBackwardBias(const T *dy, const T *x, T *dx, float *db, float *partials,
                          unsigned *tickets, int64_t rows, int64_t cols, cudaStream_t stream);
template <typename T>
void geluTanhBackwardBiasAccumulate(const T *dy, const T *x, T *dx, float *db, float *partials,
                                    unsigned *tickets, int64_t rows, int64_t cols,
                                    cudaStream_t stream);
/// dropoutBackward over dx [samples, tokensPerSample * cols] (dropout's rows are the
/// samples), and db[cols] = dx summed over its samples * tokensPerSample rows of cols, in
/// one launch, with the bits of dropoutBackward then biasBackward. dx may be dy.
template <typename T>
void dropoutBackwardBias(const T *dy, T *dx, float *db, float *partials, unsigned *tickets,
                         int64_t samples, int64_t tokensPerSample, int64_t cols, float rate,
                         const DropoutKey &key, cudaStream_t stream);
/// The same with db[cols] += the sum: the bits of dropoutBackward then biasBackwardAccumulate.
template <typename T>
void dropoutBackwardBiasAccumulate(const T *dy, T *dx, float *db, float *partials,
                                   unsigned *tickets, int64_t samples, int64_t tokensPerSample,
                                   int64_t cols, float rate, const DropoutKey &key,
                                   cudaStream_t stream);

// ---- Dropout (dropout.cu) ----

/// Inverted dropout over [rows, rowSize]: element i of row r is kept when
/// dropoutKeep(key, r, i, rate) (bit-identical masks to the CPU), kept values scaled by
/// 1 / (1 - rate); rate == 0 copies. The backward regenerates the mask.
template <typename T>
void dropoutForward(const T *x, T *y, int64_t rows, int64_t rowSize, float rate,
                    const DropoutKey &key, cudaStream_t stream);
template <typename T>
void dropoutBackward(const T *dy, T *dx, int64_t rows, int64_t rowSize, float rate,
                     const DropoutKey &key, cudaStream_t stream);

// ---- RMSNorm (rms_norm.cu) and rotary embeddings (rope.cu) ----

/// As cpu::rmsNormForward.
template <typename T>
void rmsNormForward(const T *x, const T *weight, T *y, int64_t rows, int64_t cols, float eps,
                    cudaStream_t stream);
/// As cpu::rmsNormBackward, the row kernel leaving each row's r in `rstd` ([rows] floats,
/// the op's kernel workspace) for the column sums of dweight (overwritten, fp32).
template <typename T>
void rmsNormBackward(const T *dy, const T *x, const T *weight, T *dx, float *dweight, float *rstd,
                     int64_t rows, int64_t cols, float eps, cudaStream_t stream);
/// As cpu::ropeForward and cpu::ropeBackward; invFreq (headDim / 2 values, at most
/// kRopeMaxFrequencies) is host memory, passed to the kernel by value.
template <typename T>
void ropeForward(const T *x, const int32_t *positions, T *y, int64_t tokens, int64_t heads,
                 int64_t headDim, const float *invFreq, cudaStream_t stream);
template <typename T>
void ropeBackward(const T *dy, const int32_t *positions, T *dx, int64_t tokens, int64_t heads,
                  int64_t headDim, const float *invFreq, cudaStream_t stream);

// ---- The LM head loss (lm_head_loss.cu) ----

/// As cpu::lmHeadLossForward, through the same workspace, queued on the gemms' stream: per
/// chunk a cuBLASLt GEMM into the fp32 block and one block of threads per row, then one
/// launch summing the tokens' losses in a fixed order (cuda_gemm.h's LinearGemms, declared
/// here so that trainers need no other header).
class LinearGemms;
template <typename T>
void lmHeadLossForward(LinearGemms &gemms, const T *hidden, const T *weight, const int32_t *labels,
                       float *loss, float *workspace, int64_t tokens, int64_t width, int64_t vocab,
                       int64_t tokenChunk, float normalizer);
/// As cpu::lmHeadLossBackward (dweight overwritten, or null) and
/// cpu::lmHeadLossBackwardAccumulate: per chunk the logits GEMM, the row kernel rewriting the
/// block as dlogits in T, then the GEMMs of dhidden and of dweight (beta = 1 after the first
/// chunk, or always when accumulating).
template <typename T>
void lmHeadLossBackward(LinearGemms &gemms, const float *dloss, const T *hidden, const T *weight,
                        const int32_t *labels, T *dhidden, float *dweight, float *workspace,
                        int64_t tokens, int64_t width, int64_t vocab, int64_t tokenChunk,
                        float normalizer);
template <typename T>
void lmHeadLossBackwardAccumulate(LinearGemms &gemms, const float *dloss, const T *hidden,
                                  const T *weight, const int32_t *labels, T *dhidden,
                                  float *dweight, float *workspace, int64_t tokens, int64_t width,
                                  int64_t vocab, int64_t tokenChunk, float normalizer);

// ---- LayerNorm (layernorm.cu) ----

/// y = LayerNorm(x) over the last dim (biased variance, as torch.nn.LayerNorm), saving each
/// row's mean and reciprocal standard deviation ([rows] fp32 each) for the backward.
template <typename T>
void layerNormForward(const T *x, const T *gamma, const T *beta, T *y, float *mean, float *rstd,
                      int64_t rows, int64_t cols, float eps, cudaStream_t stream);
/// The residual add fused in: sum = a + b (stored, rounded to T, as the CPU's add), then
/// y = LayerNorm(sum) as layerNormForward. The backward takes sum as its x.
template <typename T>
void addLayerNormForward(const T *a, const T *b, T *sum, const T *gamma, const T *beta, T *y,
                         float *mean, float *rstd, int64_t rows, int64_t cols, float eps,
                         cudaStream_t stream);
/// The same over [samples * tokensPerSample, cols] with a dropped out at `rate` first:
/// sum = dropoutForward(a) + b, dropout's rows being the samples, the dropped value rounded
/// to T as dropoutForward stores it, so sum gets the bits of dropoutForward then
/// addLayerNormForward. sum may be a or b.
template <typename T>
void dropoutAddLayerNormForward(const T *a, const T *b, T *sum, const T *gamma, const T *beta, T *y,
                                float *mean, float *rstd, int64_t samples, int64_t tokensPerSample,
                                int64_t cols, float eps, float rate, const DropoutKey &key,
                                cudaStream_t stream);
/// Writes dx, dgamma and dbeta (overwritten). Each row's mean and rstd are computed again
/// from x, as layerNormForward computes them (the IR keeps no forward's), in the kernel that
/// writes dx, which leaves them in `mean` and `rstd` ([rows] each) for the parameter sums.
/// For the fused residual add, dx is the gradient of both addends. dgamma and dbeta are
/// column sums in one launch through layerNormBackwardWorkspaceFloats(rows, cols) floats of
/// `partials` and the `tickets` (abi/kernel_workspace.h), as biasBackward's.
template <typename T>
void layerNormBackward(const T *dy, const T *x, const T *gamma, float eps, float *mean, float *rstd,
                       T *dx, float *dgamma, float *dbeta, float *partials, unsigned *tickets,
                       int64_t rows, int64_t cols, cudaStream_t stream);
/// The same, with dgamma and dbeta added to what they hold (gradient slots): each total is
/// formed first and then added, so they get the bits layerNormBackward then accumulate give.
template <typename T>
void layerNormBackwardAccumulate(const T *dy, const T *x, const T *gamma, float eps, float *mean,
                                 float *rstd, T *dx, float *dgamma, float *dbeta, float *partials,
                                 unsigned *tickets, int64_t rows, int64_t cols,
                                 cudaStream_t stream);

// ---- Attention (attention_forward.cu, attention_backward.cu; attention_mma_*.cu) ----

/// Whether attentionForward and attentionBackward of storage type T and head dimension
/// headDim run their products on tensor cores on the current device: 16-bit storage,
/// headDim at most kMaxTensorCoreAttentionHeadDim, and kernels compiled for sm_75 or newer
/// (fp16) or sm_80 or newer (bf16): the architecture of the image the device runs.
template <typename T> bool attentionOnTensorCores(int64_t headDim);

/// The CPU twin's attention (same heads, key/value groups and causal mask, same mask bias,
/// same dropout keys: cpu_kernels.h) as a fused kernel that never forms the [seq, seq]
/// matrix: scores, online softmax, dropout and the product with v run tile by tile, and a
/// causal block skips the key tiles after its last query. Writes ctx and each query row's
/// log-sum-exp in lse [batch, heads, seq].
template <typename T>
void attentionForward(const T *q, const T *k, const T *v, const int32_t *mask, T *ctx, float *lse,
                      int64_t batch, int64_t seq, int64_t hidden, AttentionHeads heads,
                      float dropoutRate, const DropoutKey &key, cudaStream_t stream);
/// Writes dq, dk, dv (overwritten; dk and dv key-shaped, each key/value head's the sum over
/// its group) from dctx, the forward's inputs, its output ctx and its lse; the probabilities
/// are recomputed tile by tile. `workspace` holds
/// attentionBackwardWorkspaceBytes(0, batch, heads, seq, dropoutRate > 0) bytes
/// (abi/kernel_workspace.h): each row's dctx·ctx, then the dropout mask the first of the two
/// gradient kernels draws and the second reads.
template <typename T>
void attentionBackward(const T *dctx, const T *q, const T *k, const T *v, const int32_t *mask,
                       const T *ctx, const float *lse, float *workspace, T *dq, T *dk, T *dv,
                       int64_t batch, int64_t seq, int64_t hidden, AttentionHeads heads,
                       float dropoutRate, const DropoutKey &key, cudaStream_t stream);

// ---- Softmax cross-entropy (cross_entropy.cu) ----

/// *loss = sum over rows of -log softmax(logits[r])[labels[r]] / normalizer; rows labelled
/// outside [0, classes) add nothing (as the CPU twin). Sums run in double.
void crossEntropyForward(const float *logits, const int32_t *labels, float *loss, int64_t batch,
                         int64_t classes, float normalizer, cudaStream_t stream);
/// The forward fused with its gradient: also dlogits = *dloss * (softmax - onehot) /
/// normalizer (0 for ignored rows), with dloss a device scalar (1, or the loss scale).
void crossEntropyForwardBackward(const float *logits, const int32_t *labels, float *loss,
                                 const float *dloss, float *dlogits, int64_t batch, int64_t classes,
                                 float normalizer, cudaStream_t stream);

// ---- AdamW (optimizer.cu, adamw_8bit.cu) ----

/// torch.optim.AdamW over every chunk in one launch, operation by operation as the CPU twin
/// (so the two agree bit for bit): config.weightDecay applies to chunks with decay set.
/// `chunks` is a device copy of adamwChunks' table (abi/kernel_workspace.h), chunkCount entries.
/// The same pass rounds each chunk's updated values into its 16-bit working copy, if it has
/// one (the CPU twin: convert after the update): workingCopies[workingOffset + i] =
/// params[paramOffset + i] as T, i < count. params and workingCopies are the arena as fp32
/// and as T values.
template <typename T>
void adamwUpdate(float *params, const float *grads, float *m, float *v, T *workingCopies,
                 const AdamWChunk *chunks, int64_t chunkCount, const cpu::AdamWConfig &config,
                 cudaStream_t stream);
/// The same over chunks none of which has a working copy (every parameter fp32).
void adamwUpdate(float *params, const float *grads, float *m, float *v, const AdamWChunk *chunks,
                 int64_t chunkCount, const cpu::AdamWConfig &config, cudaStream_t stream);
/// The same update on one fp32 parameter of n values (an update in the backward, as soon as
/// its gradient is complete), config.weightDecay 0 for parameters without decay: the CPU
/// twin's adamwUpdate, bit for bit.
void adamwUpdate(float *param, const float *grad, float *m, float *v, int64_t n,
                 const cpu::AdamWConfig &config, cudaStream_t stream);
/// The same on the fp32 master of a 16-bit parameter, rounding each updated value into its
/// working copy in the same pass: the bits of the CPU twin's adamwUpdate, then convert.
void adamwUpdate(float *master, const float *grad, float *m, float *v, bf16 *working, int64_t n,
                 const cpu::AdamWConfig &config, cudaStream_t stream);
void adamwUpdate(float *master, const float *grad, float *m, float *v, fp16 *working, int64_t n,
                 const cpu::AdamWConfig &config, cudaStream_t stream);
/// The CPU twin's 8-bit AdamW (bitsandbytes' Adam8bit) on one fp32 parameter of n values
/// whose state lies in device memory, bit for bit: one thread block per quantization block
/// (abi/adamw_8bit_state.h), config.weightDecay 0 for parameters without decay.
void adamw8bitUpdate(float *param, const float *grad, const AdamW8bitState &state, int64_t n,
                     QuantBlockSize blockSize, const cpu::AdamWConfig &config, cudaStream_t stream);
/// The same on the fp32 master of a 16-bit parameter, rounding each updated value into its
/// working copy in the same pass: the bits of the CPU twin's adamw8bitUpdate, then convert.
void adamw8bitUpdate(float *master, const float *grad, const AdamW8bitState &state, bf16 *working,
                     int64_t n, QuantBlockSize blockSize, const cpu::AdamWConfig &config,
                     cudaStream_t stream);
void adamw8bitUpdate(float *master, const float *grad, const AdamW8bitState &state, fp16 *working,
                     int64_t n, QuantBlockSize blockSize, const cpu::AdamWConfig &config,
                     cudaStream_t stream);
/// One parameter of an 8-bit update group: its fp32 values (a 16-bit parameter's master),
/// gradient and state, its 16-bit working copy (null for an fp32 parameter), its n values,
/// and whether it decays.
template <typename T> struct AdamW8bitParameter {
  float *param;
  const float *grad;
  AdamW8bitState state;
  T *working;
  int64_t n;
  bool decay;
};
/// adamw8bitUpdate on each of `count` parameters (config.weightDecay for those that decay),
/// in a few launches rather than one each: the same bits.
template <typename T>
void adamw8bitUpdate(const AdamW8bitParameter<T> *parameters, int64_t count,
                     QuantBlockSize blockSize, const cpu::AdamWConfig &config, cudaStream_t stream);

// ---- Precision (precision.cu) ----

/// to[i] = from[i] rounded to To (float <-> bf16 / fp16).
template <typename From, typename To>
void convert(const From *from, To *to, int64_t n, cudaStream_t stream);
/// grad *= inverseScale over n values; *nonFinite (a device int) becomes 1 when any result
/// is inf or NaN and 0 otherwise: fp16 loss scaling's overflow check.
void unscaleGradients(float *grad, int64_t n, float inverseScale, int *nonFinite,
                      cudaStream_t stream);

// ---- Global gradient norm (gradient_norm.cu) ----

/// *result = sum of x[i]^2 over n values, accumulated in double in a fixed order.
/// `partials` is device scratch of kSquaredNormPartials doubles (abi/kernel_workspace.h).
void squaredNorm(const float *x, int64_t n, double *partials, float *result, cudaStream_t stream);
/// torch.nn.utils.clip_grad_norm_: grad *= min(1, maxNorm / (sqrt(*squaredNormValue) + 1e-6)),
/// reading the squared norm from the device.
void clipByGlobalNorm(float *grad, int64_t n, const float *squaredNormValue, float maxNorm,
                      cudaStream_t stream);

// ---- Loss seed (loss_seed.cu) ----

/// *out = value * scale (the backward's seed: 1, or the fp16 loss scale).
void fillScalar(float *out, float value, float scale, cudaStream_t stream);

// ---- Cross-entropy gradient alone (cross_entropy_backward.cu) ----

/// dlogits = *dloss * (softmax(logits) - onehot(labels)) / normalizer, 0 for rows labelled
/// outside [0, classes): crossEntropyForwardBackward's gradient, without its loss.
void crossEntropyBackward(const float *dloss, const float *logits, const int32_t *labels,
                          float *dlogits, int64_t batch, int64_t classes, float normalizer,
                          cudaStream_t stream);

// ---- Regression loss (mse_loss.cu) ----

/// *loss = sum over rows of (predictions[r] - targets[r])^2 / normalizer (in double).
void mseLossForward(const float *predictions, const float *targets, float *loss, int64_t rows,
                    float normalizer, cudaStream_t stream);
/// dpredictions = *dloss * 2 (predictions - targets) / normalizer.
void mseLossBackward(const float *dloss, const float *predictions, const float *targets,
                     float *dpredictions, int64_t rows, float normalizer, cudaStream_t stream);

// ---- Token pooling (token_pooling.cu) ----

/// Max pooling (cpu::maxTokensForward): a block a row.
template <typename T>
void maxTokensForward(const T *x, const int32_t *mask, T *out, int64_t batch, int64_t seq,
                      int64_t hidden, cudaStream_t stream);
template <typename T>
void maxTokensBackward(const T *dy, const T *x, const int32_t *mask, T *dx, int64_t batch,
                       int64_t seq, int64_t hidden, cudaStream_t stream);

/// Mean pooling (cpu::meanTokensForward): a block a row.
template <typename T>
void meanTokensForward(const T *x, const int32_t *mask, T *out, int64_t batch, int64_t seq,
                       int64_t hidden, cudaStream_t stream);
template <typename T>
void meanTokensBackward(const T *dy, const int32_t *mask, T *dx, int64_t batch, int64_t seq,
                        int64_t hidden, cudaStream_t stream);
/// out[b, :] = x[b, index, :] for x [batch, seq, hidden].
template <typename T>
void selectTokenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t hidden,
                        int64_t index, cudaStream_t stream);
/// dx = 0 except dx[b, index, :] = dout[b, :].
template <typename T>
void selectTokenBackward(const T *dout, T *dx, int64_t batch, int64_t seq, int64_t hidden,
                         int64_t index, cudaStream_t stream);

// ---- Layout changes (reshape.cu) ----

/// out[b, :] = x[b] token after token, then zeros up to paddedSeq tokens:
/// x [batch, seq, hidden] -> out [batch, paddedSeq * hidden].
template <typename T>
void flattenForward(const T *x, T *out, int64_t batch, int64_t seq, int64_t paddedSeq,
                    int64_t hidden, cudaStream_t stream);
/// dx[b, s, :] = dy[b, s * hidden : (s + 1) * hidden] for s < seq.
template <typename T>
void flattenBackward(const T *dy, T *dx, int64_t batch, int64_t seq, int64_t paddedSeq,
                     int64_t hidden, cudaStream_t stream);

/// Slices and concatenations of the last dimension (cpu::sliceColumns, placeColumns,
/// padColumns).
template <typename T>
void sliceColumns(const T *x, T *out, int64_t rows, int64_t inWidth, int64_t start, int64_t width,
                  cudaStream_t stream);
template <typename T>
void placeColumns(const T *x, T *out, int64_t rows, int64_t width, int64_t outWidth, int64_t start,
                  cudaStream_t stream);
template <typename T>
void padColumns(const T *x, T *out, int64_t rows, int64_t width, int64_t outWidth, int64_t start,
                cudaStream_t stream);

/// y[b, j, i] = x[b, i, j] for x [batch, m, n] (y must not alias x).
void transposeLastTwo(const float *x, float *y, int64_t batch, int64_t m, int64_t n,
                      cudaStream_t stream);

} // namespace bertc::cuda
