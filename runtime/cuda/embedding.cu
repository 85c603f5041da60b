// Embedding lookup on the GPU: a row gather forward and a deterministic, atomic-free
// backward that adds into an fp32 table gradient (zeroed first, or a gradient slot). Word,
// position and token-type embeddings all use these kernels.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
constexpr int kWarpSize = 32;
/// Backward tiles: kTileTokens tokens, one per thread of the block; warp w owns the sorted
/// positions [32w, 32w + 32) of a tile, its "chunk".
constexpr int kTileTokenBits = 9;
constexpr int kTileTokens = 1 << kTileTokenBits;
constexpr int kTileWarps = kTileTokens / kWarpSize;
/// A tile's sort key is (id << kTileTokenBits) | token within the tile; kNoToken pads the
/// last tile and sorts after every real key.
constexpr uint64_t kNoToken = ~uint64_t(0);
constexpr uint32_t kNoTokenId = ~uint32_t(0);
/// The backward's blocks per column slice, each for the ids of one residue modulo kIdParts.
constexpr int kIdParts = 4;

template <typename T>
__global__ void embeddingForwardKernel(const int32_t *ids, const T *table, T *out, int64_t tokens,
                                       int64_t hidden) {
  const int64_t n = tokens * hidden;
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride()) {
    const int64_t t = i / hidden;
    out[i] = table[int64_t(ids[t]) * hidden + (i - t * hidden)];
  }
}

/// The block's kTileTokens keys, one a thread, sorted ascending (bitonic): returns the key
/// at the calling thread's position. The steps between threads of one warp exchange keys by
/// shuffles; only the 10 between warps go through shared memory (`exchange`, two buffers
/// of kTileTokens, so that one barrier a step suffices).
__device__ uint64_t sortTileKeys(uint64_t key, uint64_t (&exchange)[2][kTileTokens]) {
  const int t = threadIdx.x;
  int buffer = 0;
  for (int size = 2; size <= kTileTokens; size *= 2)
    for (int stride = size / 2; stride > 0; stride /= 2) {
      uint64_t other;
      if (stride < kWarpSize) {
        other = __shfl_xor_sync(0xffffffffu, key, stride);
      } else {
        exchange[buffer][t] = key;
        __syncthreads();
        other = exchange[buffer][t ^ stride];
        buffer ^= 1;
      }
      // The lower of a pair keeps the smaller key where its group of `size` ascends.
      const bool ascending = (t & size) == 0, lower = (t & stride) == 0;
      key = lower == ascending ? (key < other ? key : other) : (key < other ? other : key);
    }
  return key;
}

// Block (s, part) owns columns [32s, 32s + 32) of the table rows whose id is part modulo
// kIdParts (lane = column), so no other block writes where it does: no atomics. (The parts
// give a table of BERT's hidden size 4 x 24 blocks where its 24 column slices alone left
// most SMs idle; each part sorts every tile, and loads and adds only its own ids' values.)
// It walks the tokens a tile at a time; per tile:
//   1. the tile's tokens are sorted by (id, token): each id's tokens become one run of
//      sorted positions, in token order;
//   2. each warp loads the dout values of its chunk's 32 positions and sums each run's part
//      in the chunk, in token order;
//   3. a run that lies inside the chunk and is neither its first nor its last holds all the
//      tile's tokens of its id: its sum is added to its row at once;
//   4. the first and the last run part of each chunk, which may go on in the neighbouring
//      chunks, go to shared memory; warp 0 adds up the parts of each such segment in chunk
//      order, and the block adds each segment's total to its row.
// The order of every sum depends on the ids alone (the other parts' ids add zeros to runs
// that are never written), so reruns agree bit for bit.
template <typename T>
__global__ void __launch_bounds__(kTileTokens)
    embeddingBackwardKernel(const int32_t *ids, const T *dout, float *dtable, int64_t tokens,
                            int64_t hidden, int64_t paddingIdx) {
  __shared__ uint64_t exchange[2][kTileTokens];
  __shared__ uint32_t sortedIds[kTileTokens];
  __shared__ uint16_t sortedTokens[kTileTokens];
  __shared__ float firstParts[kTileWarps][kWarpSize], lastParts[kTileWarps][kWarpSize];
  __shared__ float segmentTotals[2 * kTileWarps][kWarpSize];
  __shared__ uint32_t segmentIds[2 * kTileWarps];
  __shared__ int segmentCount;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int64_t column = int64_t(blockIdx.x) * kWarpSize + lane;
  const bool inTable = column < hidden;
  const int chunk = warp * kWarpSize;
  const auto idAt = [&](int position) { return sortedIds[position]; };
  // The block's share of the ids; paddingIdx is nobody's, so its row is never touched.
  const auto ownId = [paddingIdx](uint32_t id) {
    return id % kIdParts == blockIdx.y && int64_t(id) != paddingIdx;
  };

  for (int64_t base = 0; base < tokens; base += kTileTokens) {
    __syncthreads(); // the previous tile is done with the sorted keys and the segments
    const int64_t token = base + threadIdx.x;
    const uint64_t key = sortTileKeys(
        token < tokens ? (uint64_t(uint32_t(ids[token])) << kTileTokenBits) | threadIdx.x
                       : kNoToken,
        exchange);
    sortedIds[threadIdx.x] = uint32_t(key >> kTileTokenBits);
    sortedTokens[threadIdx.x] = uint16_t(key % kTileTokens);
    __syncthreads();

    // The tile's real tokens sort before its padding: positions [0, tileTokens).
    const int64_t tileTokens = tokens - base < kTileTokens ? tokens - base : kTileTokens;
    float sums[kWarpSize];
#pragma unroll
    for (int k = 0; k < kWarpSize; ++k) {
      const int64_t row = base + sortedTokens[chunk + k];
      sums[k] = chunk + k < tileTokens && inTable && ownId(idAt(chunk + k))
                    ? loadFloat(dout + row * hidden + column)
                    : 0.0f;
    }
    // Bit k of runStarts: a run starts at position k > 0 of the chunk. Then sums[k] becomes
    // the sum of its run's part up to position k, in token order.
    uint32_t runStarts = 0;
    for (int k = 1; k < kWarpSize; ++k)
      runStarts |= uint32_t(idAt(chunk + k) != idAt(chunk + k - 1)) << k;
#pragma unroll
    for (int k = 1; k < kWarpSize; ++k)
      if ((runStarts >> k & 1u) == 0)
        sums[k] = sums[k - 1] + sums[k];
    // The first run ends where the second starts; a middle run ends at k < 31 where another
    // starts, after a start other than the chunk's.
    const int firstRunEnd = runStarts == 0 ? kWarpSize - 1 : __ffs(int(runStarts)) - 2;
    float firstPart = 0.0f;
#pragma unroll
    for (int k = 0; k < kWarpSize; ++k)
      if (k == firstRunEnd)
        firstPart = sums[k];
    const auto middleRunEnds = [&](int k) {
      return inTable && (runStarts >> (k + 1) & 1u) != 0 && (runStarts & ((2u << k) - 1)) != 0 &&
             ownId(idAt(chunk + k));
    };
    // Eight at a time: the rows of a chunk's middle runs differ, so the eight loads are
    // issued before the eight stores.
#pragma unroll
    for (int group = 0; group < kWarpSize - 1; group += 8) {
#pragma unroll
      for (int k = group; k < group + 8 && k < kWarpSize - 1; ++k)
        if (middleRunEnds(k))
          sums[k] += dtable[int64_t(idAt(chunk + k)) * hidden + column];
#pragma unroll
      for (int k = group; k < group + 8 && k < kWarpSize - 1; ++k)
        if (middleRunEnds(k))
          dtable[int64_t(idAt(chunk + k)) * hidden + column] = sums[k];
    }
    firstParts[warp][lane] = firstPart;
    lastParts[warp][lane] = sums[kWarpSize - 1];
    __syncthreads();

    // Warp 0 walks the parts in sorted order (each chunk's first, then its last if that is
    // another run) and sums the consecutive parts of one id.
    if (warp == 0) {
      int count = 0;
      float running = 0.0f;
      uint32_t runningId = kNoTokenId;
      const auto addPart = [&](uint32_t id, float part) {
        if (id == runningId) {
          running += part;
          return;
        }
        if (runningId != kNoTokenId) {
          segmentTotals[count][lane] = running;
          if (lane == 0)
            segmentIds[count] = runningId;
          ++count;
        }
        running = part;
        runningId = id;
      };
      for (int w = 0; w < kTileWarps; ++w) {
        const uint32_t first = idAt(w * kWarpSize), last = idAt(w * kWarpSize + kWarpSize - 1);
        addPart(first, firstParts[w][lane]);
        if (last != first)
          addPart(last, lastParts[w][lane]);
      }
      addPart(kNoTokenId, 0.0f);
      if (lane == 0)
        segmentCount = count;
    }
    __syncthreads();
    for (int segment = warp; segment < segmentCount; segment += kTileWarps) {
      if (!inTable || !ownId(segmentIds[segment]))
        continue;
      float *cell = dtable + int64_t(segmentIds[segment]) * hidden + column;
      *cell += segmentTotals[segment][lane];
    }
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
                       int64_t vocab, int64_t hidden, int64_t paddingIdx, cudaStream_t stream) {
  BERTC_CUDA_CHECK(cudaMemsetAsync(dtable, 0, size_t(vocab * hidden) * sizeof(float), stream));
  embeddingBackwardAccumulate(ids, dout, dtable, tokens, vocab, hidden, paddingIdx, stream);
}

template <typename T>
void embeddingBackwardAccumulate(const int32_t *ids, const T *dout, float *dtable, int64_t tokens,
                                 int64_t, int64_t hidden, int64_t paddingIdx, cudaStream_t stream) {
  if (tokens == 0 || hidden == 0)
    return;
  BERTC_LAUNCH(embeddingBackwardKernel,
               dim3(unsigned((hidden + kWarpSize - 1) / kWarpSize), kIdParts), kTileTokens, 0,
               stream, ids, dout, dtable, tokens, hidden, paddingIdx);
}

#define INSTANTIATE(T)                                                                             \
  template void embeddingForward(const int32_t *, const T *, T *, int64_t, int64_t, cudaStream_t); \
  template void embeddingBackward(const int32_t *, const T *, float *, int64_t, int64_t, int64_t,  \
                                  int64_t, cudaStream_t);                                          \
  template void embeddingBackwardAccumulate(const int32_t *, const T *, float *, int64_t, int64_t, \
                                            int64_t, int64_t, cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
