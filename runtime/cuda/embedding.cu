// Embedding lookup on the GPU: a row gather forward and a deterministic, atomic-free
// backward into the fp32 table gradient. Word, position and token-type embeddings all use
// these two kernels.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
constexpr int kWarpSize = 32;
/// Backward block: kBackwardWarps warps over a slice of kColumnsPerLane * 32 columns.
constexpr int kBackwardWarps = 8;
constexpr int kColumnsPerLane = 8;
constexpr int kSliceColumns = kColumnsPerLane * kWarpSize;

template <typename T>
__global__ void embeddingForwardKernel(const int32_t *ids, const T *table, T *out, int64_t tokens,
                                       int64_t hidden) {
  const int64_t n = tokens * hidden;
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride()) {
    const int64_t t = i / hidden;
    out[i] = table[int64_t(ids[t]) * hidden + (i - t * hidden)];
  }
}

// Block (t, s) owns the table row of id = ids[t] if t is that id's first occurrence, and
// column slice s of it; every other block exits after step 1. Steps:
//   1. the block looks for id among ids[0, t) and exits when it is there;
//   2. warp w scans the tokens 32 at a time (chunks w, w + kBackwardWarps, ...), finds the
//      ones holding id with a ballot and adds their dout rows, in token order, into per-lane
//      sums of the slice's columns;
//   3. the warps' sums are added in warp order and written to the row.
// No two blocks write the same row, so no atomics; the order is fixed, so reruns agree.
// Step 1 reads up to `tokens` ids per block (from cache): for BERT's few thousand tokens a
// step, that is small next to the dout rows every kept block reads.
template <typename T>
__global__ void embeddingBackwardKernel(const int32_t *ids, const T *dout, float *dtable,
                                        int64_t tokens, int64_t hidden) {
  const int64_t t = blockIdx.x;
  const int32_t id = ids[t];
  bool seenBefore = false;
  for (int64_t u = threadIdx.x; u < t; u += blockDim.x)
    seenBefore |= ids[u] == id;
  if (__syncthreads_or(seenBefore))
    return;

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int64_t sliceBegin = int64_t(blockIdx.y) * kSliceColumns;
  float sums[kColumnsPerLane] = {};
  for (int64_t base = int64_t(warp) * kWarpSize; base < tokens;
       base += kBackwardWarps * kWarpSize) {
    const bool holds = base + lane < tokens && ids[base + lane] == id;
    for (unsigned matches = __ballot_sync(0xffffffffu, holds); matches; matches &= matches - 1) {
      const T *row = dout + (base + __ffs(matches) - 1) * hidden;
#pragma unroll
      for (int k = 0; k < kColumnsPerLane; ++k) {
        const int64_t c = sliceBegin + lane + k * kWarpSize;
        if (c < hidden)
          sums[k] += loadFloat(row + c);
      }
    }
  }

  __shared__ float warpSums[kBackwardWarps][kSliceColumns];
#pragma unroll
  for (int k = 0; k < kColumnsPerLane; ++k)
    warpSums[warp][lane + k * kWarpSize] = sums[k];
  __syncthreads();
  for (int column = threadIdx.x; column < kSliceColumns; column += blockDim.x) {
    const int64_t c = sliceBegin + column;
    if (c >= hidden)
      break;
    float total = 0.0f;
    for (int w = 0; w < kBackwardWarps; ++w)
      total += warpSums[w][column];
    dtable[int64_t(id) * hidden + c] = total;
  }
}
} // namespace

template <typename T>
void embeddingForward(const int32_t *ids, const T *table, T *out, int64_t tokens, int64_t hidden,
                      cudaStream_t stream) {
  BERTC_LAUNCH(embeddingForwardKernel, gridFor(tokens * hidden), kElementwiseThreads, 0, stream,
               ids, table, out, tokens, hidden);
}

template <typename T>
void embeddingBackward(const int32_t *ids, const T *dout, float *dtable, int64_t tokens,
                       int64_t vocab, int64_t hidden, cudaStream_t stream) {
  BERTC_CUDA_CHECK(cudaMemsetAsync(dtable, 0, size_t(vocab * hidden) * sizeof(float), stream));
  if (tokens == 0 || hidden == 0)
    return;
  const dim3 grid(unsigned(tokens), unsigned((hidden + kSliceColumns - 1) / kSliceColumns));
  BERTC_LAUNCH(embeddingBackwardKernel, grid, kBackwardWarps * kWarpSize, 0, stream, ids, dout,
               dtable, tokens, hidden);
}

#define INSTANTIATE(T)                                                                             \
  template void embeddingForward(const int32_t *, const T *, T *, int64_t, int64_t, cudaStream_t); \
  template void embeddingBackward(const int32_t *, const T *, float *, int64_t, int64_t, int64_t,  \
                                  cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
