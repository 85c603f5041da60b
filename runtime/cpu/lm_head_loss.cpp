// The causal-LM head's loss on the CPU (bert.lm_head_loss), never forming the [tokens,
// vocab] logits: the tokens are taken tokenChunk at a time through one fp32 block of the
// workspace (bertc/abi/lm_head_loss.h). Per chunk:
//   1. logits = hidden[chunk] weight^T into the block (splitGemm: sgemm, or fp32
//      accumulation over converted tiles for 16-bit storage);
//   2. per row, the fp32 log-sum-exp (the max, then the exponentials summed in double);
//      the forward keeps lse - logit[label] per token, the backward rewrites the row in
//      place as its gradient (softmax - onehot) * dloss / normalizer rounded to T;
//   3. backward only: dhidden[chunk] = dlogits weight, dweight += dlogits^T hidden[chunk].
// The forward sums the tokens' losses in token order once all chunks have run.
#include "bertc/abi/lm_head_loss.h"
#include "bertc/runtime/cpu_kernels.h"

#include "mixed_gemm.h"
#include "parallel.h"
#include "storage_types.h"

#include <algorithm>
#include <cmath>

namespace bertc::cpu {

namespace {
/// Rows of a chunk one thread takes at a time.
constexpr int64_t kRowChunk = 4;

/// A label outside [0, vocab): -100 (PyTorch's ignore_index).
bool isIgnored(int32_t label, int64_t vocab) { return label < 0 || label >= vocab; }

/// log(sum exp(row)) of one row of fp32 logits.
float rowLogSumExp(const float *row, int64_t vocab) {
  const float rowMax = *std::max_element(row, row + vocab);
  double sum = 0.0;
  for (int64_t c = 0; c < vocab; ++c)
    sum += std::exp(row[c] - rowMax);
  return rowMax + float(std::log(sum));
}

/// Step 1: block[rows, vocab] = hidden[rows, width] weight[vocab, width]^T in fp32.
template <typename T>
void chunkLogits(const T *hidden, const T *weight, float *block, int64_t rows, int64_t width,
                 int64_t vocab) {
  splitGemm(false, true, rows, vocab, width, 1.0f, hidden, width, weight, width, 0.0f, block,
            vocab);
}

/// Step 2 of the backward for one row: the row's gradient in T from its first byte. Element c
/// overwrites bytes of element c * sizeof(T) / 4 <= c, read already.
template <typename T> void rowGradient(float *row, int32_t label, int64_t vocab, float rowScale) {
  T *grad = reinterpret_cast<T *>(row);
  if (isIgnored(label, vocab)) {
    std::fill(grad, grad + vocab, fromFloat<T>(0.0f));
    return;
  }
  const float lse = rowLogSumExp(row, vocab);
  for (int64_t c = 0; c < vocab; ++c) {
    const float probability = std::exp(row[c] - lse);
    grad[c] = fromFloat<T>(rowScale * (probability - (c == label ? 1.0f : 0.0f)));
  }
}

/// The backward, dweight overwritten or (accumulate) added to; a null dweight is skipped.
template <typename T>
void backward(const float *dloss, const T *hidden, const T *weight, const int32_t *labels,
              T *dhidden, float *dweight, bool accumulate, float *block, int64_t tokens,
              int64_t width, int64_t vocab, int64_t tokenChunk, float normalizer) {
  const float rowScale = float(double(*dloss) / double(normalizer));
  const int64_t ld = lmHeadPackedLd<T>(vocab);
  const T *grad = reinterpret_cast<const T *>(block);
  for (int64_t first = 0; first < tokens; first += tokenChunk) {
    const int64_t rows = std::min(tokenChunk, tokens - first);
    chunkLogits(hidden + first * width, weight, block, rows, width, vocab);
    forEachChunk(rows, kRowChunk, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        rowGradient<T>(block + r * vocab, labels[first + r], vocab, rowScale);
    });
    splitGemm(false, false, rows, width, vocab, 1.0f, grad, ld, weight, width, 0.0f,
              dhidden + first * width, width);
    if (dweight)
      splitGemm(true, false, vocab, width, rows, 1.0f, grad, ld, hidden + first * width, width,
                accumulate || first > 0 ? 1.0f : 0.0f, dweight, width);
  }
  if (dweight && !accumulate && tokens == 0)
    std::fill(dweight, dweight + vocab * width, 0.0f);
}
} // namespace

template <typename T>
void lmHeadLossForward(const T *hidden, const T *weight, const int32_t *labels, float *loss,
                       float *workspace, int64_t tokens, int64_t width, int64_t vocab,
                       int64_t tokenChunk, float normalizer) {
  float *block = workspace;
  float *tokenLosses = workspace + lmHeadBlockFloats(tokenChunk, vocab);
  for (int64_t first = 0; first < tokens; first += tokenChunk) {
    const int64_t rows = std::min(tokenChunk, tokens - first);
    chunkLogits(hidden + first * width, weight, block, rows, width, vocab);
    forEachChunk(rows, kRowChunk, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int32_t label = labels[first + r];
        const float *row = block + r * vocab;
        tokenLosses[first + r] =
            isIgnored(label, vocab) ? 0.0f : rowLogSumExp(row, vocab) - row[label];
      }
    });
  }
  double total = 0.0;
  for (int64_t t = 0; t < tokens; ++t)
    total += tokenLosses[t];
  *loss = float(total / double(normalizer));
}

template <typename T>
void lmHeadLossBackward(const float *dloss, const T *hidden, const T *weight, const int32_t *labels,
                        T *dhidden, float *dweight, float *workspace, int64_t tokens, int64_t width,
                        int64_t vocab, int64_t tokenChunk, float normalizer) {
  backward(dloss, hidden, weight, labels, dhidden, dweight, /*accumulate=*/false, workspace, tokens,
           width, vocab, tokenChunk, normalizer);
}

template <typename T>
void lmHeadLossBackwardAccumulate(const float *dloss, const T *hidden, const T *weight,
                                  const int32_t *labels, T *dhidden, float *dweight,
                                  float *workspace, int64_t tokens, int64_t width, int64_t vocab,
                                  int64_t tokenChunk, float normalizer) {
  backward(dloss, hidden, weight, labels, dhidden, dweight, /*accumulate=*/true, workspace, tokens,
           width, vocab, tokenChunk, normalizer);
}

#define INSTANTIATE(T)                                                                             \
  template void lmHeadLossForward(const T *, const T *, const int32_t *, float *, float *,         \
                                  int64_t, int64_t, int64_t, int64_t, float);                      \
  template void lmHeadLossBackward(const float *, const T *, const T *, const int32_t *, T *,      \
                                   float *, float *, int64_t, int64_t, int64_t, int64_t, float);   \
  template void lmHeadLossBackwardAccumulate(const float *, const T *, const T *, const int32_t *, \
                                             T *, float *, float *, int64_t, int64_t, int64_t,     \
                                             int64_t, float);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cpu
