// Internal to the CUDA kernels: deterministic sums over the rows of a [rows, cols] matrix,
// one column per output (bias gradients, LayerNorm's dgamma and dbeta), in two passes (one
// when the rows make a single slice).
//
// First pass: block (x, y) owns kColumnTile adjacent columns of row slice y (the rows split
// evenly into gridDim.y slices); its threads form kRowGroups groups of kColumnTile, so a
// warp reads kColumnTile consecutive values of one row (coalesced); group g sums rows g,
// g + kRowGroups, ... of the slice in order, then thread (c, 0) adds the groups' partial sums
// in group order and writes the slice's sum to row y of its output. With one slice that row
// is the result. Given a workspace, the rows split into columnSumSlices(rows) slices
// (abi/kernel_workspace.h), so that a matrix of few columns still fills the GPU, and a second
// pass adds each column's slice sums in slice order. The order never depends on timing, so
// reruns give the same bits.
#pragma once

#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/cuda_check.h"

#include "launch.cuh"

#include <cstdint>

namespace bertc::cuda {

constexpr int kColumnTile = 32;
constexpr int kRowGroups = 32;
/// Threads of a columnSums block (kernels calling it declare it in __launch_bounds__).
constexpr int kColumnSumsThreads = kColumnTile * kRowGroups;

/// Threads of a columnSums block: kColumnTile x kRowGroups.
inline dim3 columnSumsBlock() { return dim3(kColumnTile, kRowGroups); }

/// kOutputs column sums, each [slices, cols] (one row per slice) or the final [cols]. With
/// `accumulate`, each final sum is added to what its output holds (a gradient slot): the
/// total is formed first, so the output gets the bits a separate sum and add would give.
template <int kOutputs> struct ColumnSumOutputs {
  float *sums[kOutputs];
  bool accumulate = false;
};

/// Writes a column's final sum, or adds it (ColumnSumOutputs::accumulate).
__device__ inline void storeColumnSum(float *out, float total, bool accumulate) {
  *out = accumulate ? *out + total : total;
}

/// The first pass: row blockIdx.y of outputs.sums[k] gets, for the calling block's columns,
/// the sum of value k of valuesAt(r, c, values[kOutputs]) over the rows r of slice
/// blockIdx.y.
template <int kOutputs, typename ValuesAt>
__device__ void columnSums(const ValuesAt &valuesAt, int64_t rows, int64_t cols,
                           const ColumnSumOutputs<kOutputs> &outputs) {
  __shared__ float partial[kOutputs][kRowGroups][kColumnTile + 1];
  const int64_t c = int64_t(blockIdx.x) * kColumnTile + threadIdx.x;
  const int64_t sliceRows = (rows + gridDim.y - 1) / gridDim.y;
  const int64_t begin = int64_t(blockIdx.y) * sliceRows;
  const int64_t end = begin + sliceRows < rows ? begin + sliceRows : rows;
  float sums[kOutputs] = {};
  if (c < cols)
    for (int64_t r = begin + threadIdx.y; r < end; r += kRowGroups) {
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
    storeColumnSum(&outputs.sums[k][int64_t(blockIdx.y) * cols + c], total, outputs.accumulate);
  }
}

/// The second pass: outputs.sums[k][c] = the sum of sliceSums.sums[k][s * cols + c] over the
/// slices s, in order.
template <int kOutputs>
__global__ void addColumnSlicesKernel(ColumnSumOutputs<kOutputs> sliceSums, int64_t slices,
                                      int64_t cols, ColumnSumOutputs<kOutputs> outputs) {
  for (int64_t i = gridStrideBegin(); i < kOutputs * cols; i += gridStride()) {
    const int k = int(i / cols);
    const int64_t c = i - k * cols;
    float total = 0.0f;
    for (int64_t s = 0; s < slices; ++s)
      total += sliceSums.sums[k][s * cols + c];
    storeColumnSum(&outputs.sums[k][c], total, outputs.accumulate);
  }
}

/// Queues a column sum into `outputs` ([cols] each): the first pass through
/// launchFirstPass(grid, firstPassOutputs), a launch (blocks of columnSumsBlock()) of a kernel
/// that calls columnSums with firstPassOutputs, then the second pass.
/// `partials` holds columnSumsWorkspaceFloats(kOutputs, rows, cols) floats (none with one
/// slice, where the first pass writes `outputs` directly and is the only one).
template <int kOutputs, typename LaunchFirstPass>
void launchColumnSums(int64_t rows, int64_t cols, const ColumnSumOutputs<kOutputs> &outputs,
                      float *partials, cudaStream_t stream,
                      const LaunchFirstPass &launchFirstPass) {
  if (cols == 0)
    return;
  const int64_t slices = columnSumSlices(rows);
  const unsigned tiles = unsigned((cols + kColumnTile - 1) / kColumnTile);
  if (slices == 1) {
    launchFirstPass(dim3(tiles), outputs);
    return;
  }
  ColumnSumOutputs<kOutputs> sliceSums; // written, never accumulated
  for (int k = 0; k < kOutputs; ++k)
    sliceSums.sums[k] = partials + k * slices * cols;
  launchFirstPass(dim3(tiles, unsigned(slices)), sliceSums);
  BERTC_LAUNCH(addColumnSlicesKernel<kOutputs>, gridFor(kOutputs * cols), kElementwiseThreads, 0,
               stream, sliceSums, slices, cols, outputs);
}

} // namespace bertc::cuda
