// The causal-LM head's loss on the GPU, the CPU twin's steps (lm_head_loss.cpp) through the
// same workspace (bertc/abi/lm_head_loss.h), everything queued on the gemms' stream. Per
// chunk of tokenChunk tokens:
//   1. the logits as one cuBLASLt GEMM into the fp32 block (T operands, fp32 accumulation
//      and output);
//   2. one block of threads per row: the fp32 log-sum-exp (a block-wide max, then a tree
//      of fp32 sums of expf), then the token's loss (forward) or the row's gradient
//      rewritten in place in T (backward), tile by tile: every thread reads its logit of a
//      tile before any writes the tile's T values, which lie over the tile's and earlier
//      tiles' floats only;
//   3. backward only: the GEMMs of dhidden and of dweight (beta = 1 but for the first
//      chunk of a dweight that is overwritten).
// The forward's last launch sums the tokens' losses in a fixed order, so a rerun gives the
// same bits.
#include "bertc/abi/lm_head_loss.h"
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_gemm.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "launch.cuh"
#include "warp_reduce.cuh"

#include <algorithm>
#include <type_traits>

namespace bertc::cuda {

namespace {
constexpr int kWarpSize = 32;
constexpr int kRowThreads = 256;
constexpr int kRowWarps = kRowThreads / kWarpSize;

/// The block-wide maximum of `value`; `shared` holds a float per warp.
__device__ float blockMax(float value, float *shared) {
  value = warpMax(value);
  if (threadIdx.x % kWarpSize == 0)
    shared[threadIdx.x / kWarpSize] = value;
  __syncthreads();
  float result = shared[0];
  for (int w = 1; w < kRowWarps; ++w)
    result = fmaxf(result, shared[w]);
  __syncthreads(); // `shared` is free for the next reduction
  return result;
}

/// The block-wide sum of `value`, the warps' sums added in warp order.
__device__ float blockSum(float value, float *shared) {
  value = warpSum(value);
  if (threadIdx.x % kWarpSize == 0)
    shared[threadIdx.x / kWarpSize] = value;
  __syncthreads();
  float result = 0.0f;
  for (int w = 0; w < kRowWarps; ++w)
    result += shared[w];
  __syncthreads();
  return result;
}

/// log(sum exp(row)) of one row of fp32 logits, in every thread of its block.
__device__ float rowLogSumExp(const float *row, int64_t vocab, float *shared) {
  float localMax = -INFINITY;
  for (int64_t c = threadIdx.x; c < vocab; c += kRowThreads)
    localMax = fmaxf(localMax, row[c]);
  const float rowMax = blockMax(localMax, shared);
  float localSum = 0.0f;
  for (int64_t c = threadIdx.x; c < vocab; c += kRowThreads)
    localSum += expf(row[c] - rowMax);
  return rowMax + logf(blockSum(localSum, shared));
}

__device__ __forceinline__ bool isIgnored(int32_t label, int64_t vocab) {
  return label < 0 || label >= vocab;
}

/// tokenLosses[r] = lse - logit[label] of block row r (0 for an ignored label).
__global__ void __launch_bounds__(kRowThreads)
    tokenLossKernel(const float *block, const int32_t *labels, float *tokenLosses, int64_t vocab) {
  __shared__ float shared[kRowWarps];
  const float *row = block + int64_t(blockIdx.x) * vocab;
  const int32_t label = labels[blockIdx.x];
  const float loss = isIgnored(label, vocab) ? 0.0f : rowLogSumExp(row, vocab, shared) - row[label];
  if (threadIdx.x == 0)
    tokenLosses[blockIdx.x] = loss;
}

constexpr int kSumThreads = 256;

/// *loss = the tokens' losses summed in double (each thread a strided share, then the warps
/// and the block in a fixed order) / normalizer.
__global__ void __launch_bounds__(kSumThreads)
    lossSumKernel(const float *tokenLosses, int64_t tokens, float *loss, float normalizer) {
  __shared__ double warpTotals[kSumThreads / kWarpSize];
  double sum = 0.0;
  for (int64_t t = threadIdx.x; t < tokens; t += kSumThreads)
    sum += tokenLosses[t];
  sum = warpSum(sum);
  if (threadIdx.x % kWarpSize == 0)
    warpTotals[threadIdx.x / kWarpSize] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int w = 0; w < kSumThreads / kWarpSize; ++w)
      total += warpTotals[w];
    *loss = float(total / double(normalizer));
  }
}

/// Block row r rewritten from its first byte as (softmax - onehot(label)) * rowScale in T.
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    logitGradientKernel(float *block, const int32_t *labels, int64_t vocab, const float *dloss,
                        float normalizer) {
  __shared__ float shared[kRowWarps];
  float *row = block + int64_t(blockIdx.x) * vocab;
  T *grad = reinterpret_cast<T *>(row);
  const int32_t label = labels[blockIdx.x];
  const bool ignored = isIgnored(label, vocab);
  const float lse = ignored ? 0.0f : rowLogSumExp(row, vocab, shared);
  const float rowScale = float(double(*dloss) / double(normalizer));
  for (int64_t start = 0; start < vocab; start += kRowThreads) {
    const int64_t c = start + threadIdx.x;
    float value = 0.0f;
    if (c < vocab && !ignored)
      value = rowScale * (expf(row[c] - lse) - (c == label ? 1.0f : 0.0f));
    if constexpr (!std::is_same_v<T, float>)
      __syncthreads(); // the tile is read before its T values overwrite it
    if (c < vocab)
      storeRounded(grad + c, value);
  }
}

/// Step 1: block[rows, vocab] = hidden[rows, width] weight[vocab, width]^T in fp32.
template <typename T>
void chunkLogits(LinearGemms &gemms, const T *hidden, const T *weight, float *block, int64_t rows,
                 int64_t width, int64_t vocab) {
  gemms.gemm<T, float>({hidden, width, 0, false}, {weight, width, 0, true}, {block, vocab}, rows,
                       vocab, width);
}

template <typename T>
void backward(LinearGemms &gemms, const float *dloss, const T *hidden, const T *weight,
              const int32_t *labels, T *dhidden, float *dweight, bool accumulate, float *block,
              int64_t tokens, int64_t width, int64_t vocab, int64_t tokenChunk, float normalizer) {
  const int64_t ld = lmHeadPackedLd<T>(vocab);
  const T *grad = reinterpret_cast<const T *>(block);
  for (int64_t first = 0; first < tokens; first += tokenChunk) {
    const int64_t rows = std::min(tokenChunk, tokens - first);
    chunkLogits(gemms, hidden + first * width, weight, block, rows, width, vocab);
    BERTC_LAUNCH(logitGradientKernel<T>, unsigned(rows), kRowThreads, 0, gemms.stream(), block,
                 labels + first, vocab, dloss, normalizer);
    gemms.gemm<T, T>({grad, ld, 0, false}, {weight, width, 0, false},
                     {dhidden + first * width, width}, rows, width, vocab);
    if (dweight)
      gemms.gemm<T, float>({grad, ld, 0, true}, {hidden + first * width, width, 0, false},
                           {dweight, width}, vocab, width, rows,
                           accumulate || first > 0 ? 1.0f : 0.0f);
  }
  if (dweight && !accumulate && tokens == 0)
    BERTC_CUDA_CHECK(
        cudaMemsetAsync(dweight, 0, size_t(vocab * width) * sizeof(float), gemms.stream()));
}
} // namespace

template <typename T>
void lmHeadLossForward(LinearGemms &gemms, const T *hidden, const T *weight, const int32_t *labels,
                       float *loss, float *workspace, int64_t tokens, int64_t width, int64_t vocab,
                       int64_t tokenChunk, float normalizer) {
  float *block = workspace;
  float *tokenLosses = workspace + lmHeadBlockFloats(tokenChunk, vocab);
  for (int64_t first = 0; first < tokens; first += tokenChunk) {
    const int64_t rows = std::min(tokenChunk, tokens - first);
    chunkLogits(gemms, hidden + first * width, weight, block, rows, width, vocab);
    BERTC_LAUNCH(tokenLossKernel, unsigned(rows), kRowThreads, 0, gemms.stream(), block,
                 labels + first, tokenLosses + first, vocab);
  }
  BERTC_LAUNCH(lossSumKernel, 1, kSumThreads, 0, gemms.stream(), tokenLosses, tokens, loss,
               normalizer);
}

template <typename T>
void lmHeadLossBackward(LinearGemms &gemms, const float *dloss, const T *hidden, const T *weight,
                        const int32_t *labels, T *dhidden, float *dweight, float *workspace,
                        int64_t tokens, int64_t width, int64_t vocab, int64_t tokenChunk,
                        float normalizer) {
  backward(gemms, dloss, hidden, weight, labels, dhidden, dweight, /*accumulate=*/false, workspace,
           tokens, width, vocab, tokenChunk, normalizer);
}

template <typename T>
void lmHeadLossBackwardAccumulate(LinearGemms &gemms, const float *dloss, const T *hidden,
                                  const T *weight, const int32_t *labels, T *dhidden,
                                  float *dweight, float *workspace, int64_t tokens, int64_t width,
                                  int64_t vocab, int64_t tokenChunk, float normalizer) {
  backward(gemms, dloss, hidden, weight, labels, dhidden, dweight, /*accumulate=*/true, workspace,
           tokens, width, vocab, tokenChunk, normalizer);
}

#define INSTANTIATE(T)                                                                             \
  template void lmHeadLossForward(LinearGemms &, const T *, const T *, const int32_t *, float *,   \
                                  float *, int64_t, int64_t, int64_t, int64_t, float);             \
  template void lmHeadLossBackward(LinearGemms &, const float *, const T *, const T *,             \
                                   const int32_t *, T *, float *, float *, int64_t, int64_t,       \
                                   int64_t, int64_t, float);                                       \
  template void lmHeadLossBackwardAccumulate(LinearGemms &, const float *, const T *, const T *,   \
                                             const int32_t *, T *, float *, float *, int64_t,      \
                                             int64_t, int64_t, int64_t, float);
INSTANTIATE(float)
INSTANTIATE(bf16)
INSTANTIATE(fp16)
#undef INSTANTIATE

} // namespace bertc::cuda
