// Internal to the CUDA kernels: deterministic sums over the rows of a [rows, cols] matrix,
// one column per output (bias gradients, LayerNorm's dgamma and dbeta).
//
// One block owns kColumnTile adjacent columns: its threads form kRowGroups groups of
// kColumnTile, so a warp reads kColumnTile consecutive values of one row (coalesced); group
// g sums rows g, g + kRowGroups, ... in order, then thread (c, 0) adds the groups' partial
// sums in group order. The order never depends on timing, so reruns give the same bits.
#pragma once

#include <cstdint>

namespace bertc::cuda {

constexpr int kColumnTile = 32;
constexpr int kRowGroups = 32;
/// Threads of a columnSums block (kernels calling it declare it in __launch_bounds__).
constexpr int kColumnSumsThreads = kColumnTile * kRowGroups;

/// Grid for columnSums over `cols` columns (blocks of kColumnTile x kRowGroups threads).
inline dim3 columnSumsGrid(int64_t cols) {
  return dim3(unsigned((cols + kColumnTile - 1) / kColumnTile));
}
inline dim3 columnSumsBlock() { return dim3(kColumnTile, kRowGroups); }

/// outputs[k][c] = sum over r < rows of value k of valuesAt(r, c, values[kOutputs]), for the
/// calling block's columns.
template <int kOutputs, typename ValuesAt>
__device__ void columnSums(const ValuesAt &valuesAt, int64_t rows, int64_t cols,
                           float *const (&outputs)[kOutputs]) {
  __shared__ float partial[kOutputs][kRowGroups][kColumnTile + 1];
  const int64_t c = int64_t(blockIdx.x) * kColumnTile + threadIdx.x;
  float sums[kOutputs] = {};
  if (c < cols)
    for (int64_t r = threadIdx.y; r < rows; r += kRowGroups) {
      float values[kOutputs];
      valuesAt(r, c, values);
#pragma unroll
      for (int k = 0; k < kOutputs; ++k)
        sums[k] += values[k];
    }
#pragma unroll
  for (int k = 0; k < kOutputs; ++k)
    partial[k][threadIdx.y][threadIdx.x] = sums[k];
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols)
    return;
#pragma unroll
  for (int k = 0; k < kOutputs; ++k) {
    float total = 0.0f;
    for (int g = 0; g < kRowGroups; ++g)
      total += partial[k][g][threadIdx.x];
    outputs[k][c] = total;
  }
}

} // namespace bertc::cuda
