// Attention on tensor cores (an attention op with head_chunk > 0): the CPU twin's
// cpu::chunkedAttentionForward/Backward, step for step. Heads are taken headChunk at a time
// (a multiple of heads.group() up to heads); each product is one cuBLASLt GEMM over the
// chunk's heads and the batch (LinearGemms::batchedGemm, a group per head), reading the
// heads in place in the [batch, seq, hidden] tensors (leading dimension hidden, batch stride
// seq * hidden, head stride headDim; the key-shaped ones' kv_heads * headDim, each key/value
// head read by its group's query heads), with the chunk's [seq, seq] matrices in score
// blocks of the op's workspace (abi/kernel_workspace.h):
//   forward   scores = q k^T (fp32); per row of the chunk, one kernel: the masked, scaled
//             scores' softmax, lse, and P*Z (the probabilities times the dropout factor 0
//             or 1 / (1 - rate)) rounded to T in place; ctx = (P*Z) v, rounded once to T;
//   backward  scores = q k^T and dP = dctx v^T (fp32); per row, one kernel: the row term
//             r = dctx . ctx, P from the scores and lse, P*Z rounded to T in place of the
//             scores, dS = P (dP Z - r) / sqrt(d) rounded to T in place of dP;
//             dv = (P*Z)^T dctx, dq = dS k, dk = dS^T q; with grouped-query heads, dv and dk
//             per query head in fp32 in the workspace, then summed over each group and
//             rounded once.
// With causal, the GEMMs compute every score and the mask gives the later keys probability
// 0 (the fused kernels skip them).
// The scale, mask bias, dropout keys and fully masked rows are the fused kernels'
// (attention_common.cuh), so the two paths differ only by the 16-bit rounding of P*Z and dS
// and the GEMMs' order of summation. With GemmMath::Tf32 (fp32 only, a plan made with
// --tf32) every product rounds its operands to TF32. The launches are queued on the gemms'
// stream.
#pragma once

#include "bertc/runtime/attention_heads.h"
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cuda_gemm.h"

#include <cstdint>

namespace bertc::cuda {

/// Writes ctx and lse [batch, heads, seq] as attentionForward, through `workspace`
/// (attentionForwardWorkspaceBytes(headChunk, batch, seq) bytes).
template <typename T>
void chunkedAttentionForward(LinearGemms &gemms, const T *q, const T *k, const T *v,
                             const int32_t *mask, T *ctx, float *lse, float *workspace,
                             int64_t headChunk, int64_t batch, int64_t seq, int64_t hidden,
                             AttentionHeads heads, float dropoutRate, const DropoutKey &key,
                             GemmMath math = GemmMath::Fp32);

/// Writes dq, dk, dv (overwritten) as attentionBackward, through `workspace`
/// (attentionBackwardWorkspaceBytes(headChunk, batch, heads, seq, dropout, headDim where
/// kvHeads < heads, else 0) bytes: the two score blocks, and the grouped heads' dk and dv).
template <typename T>
void chunkedAttentionBackward(LinearGemms &gemms, const T *dctx, const T *q, const T *k, const T *v,
                              const int32_t *mask, const T *ctx, const float *lse, float *workspace,
                              T *dq, T *dk, T *dv, int64_t headChunk, int64_t batch, int64_t seq,
                              int64_t hidden, AttentionHeads heads, float dropoutRate,
                              const DropoutKey &key, GemmMath math = GemmMath::Fp32);

} // namespace bertc::cuda
