// Internal to the CUDA kernels: deterministic sums over the rows of a [rows, cols] matrix,
// one column per output (bias gradients, LayerNorm's dgamma and dbeta), in one launch.
//
// Block (x, y) owns the column tiles x, x + gridDim.x, ... of row slice y (the rows split
// evenly into gridDim.y = columnSumSlices(rows) slices, abi/kernel_workspace.h, so that a
// matrix of few columns still fills the GPU). Its threads form kRowGroups groups of
// kColumnTile, each thread one column of the tile or a few adjacent ones, so a warp reads
// consecutive values of one row (coalesced); group g sums rows g, g + kRowGroups, ... of
// the slice in order, then thread (x, 0) adds the groups' sums in group order. With one
// slice that is the column's sum. With several, each block writes its slices' sums to the
// partials and takes a ticket for its grid column (a counter that the last block resets to
// zero, so the tickets are zero between launches); the block that takes the last ticket
// adds the slices' sums of its tiles in slice order. The order never depends on timing, so
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

/// kOutputs column sums, each [cols]. With `accumulate`, each sum is added to what its
/// output holds (a gradient slot): the total is formed first, so the output gets the bits a
/// separate sum and add would give. With several row slices the slices' sums go to
/// `partials` (columnSumsWorkspaceFloats of them) and the blocks count themselves in
/// `tickets` (kColumnSumTickets of them, zero before the launch and after it).
template <int kOutputs> struct ColumnSumOutputs {
  float *sums[kOutputs];
  bool accumulate = false;
  float *partials = nullptr;
  unsigned *tickets = nullptr;
};

/// Writes a column's final sum, or adds it (ColumnSumOutputs::accumulate).
__device__ inline void storeColumnSum(float *out, float total, bool accumulate) {
  *out = accumulate ? *out + total : total;
}

/// Whether the calling block is the last of its grid column to get here; that block also
/// resets the column's ticket. Every thread must have fenced its partial sums before.
__device__ inline bool takesLastTicket(unsigned *tickets) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    last = atomicAdd(&tickets[blockIdx.x], 1u) == gridDim.y - 1;
    if (last)
      atomicExch(&tickets[blockIdx.x], 0u);
  }
  __syncthreads();
  return last;
}

/// A columnSums that only reads: nothing is written back.
struct NoWriteBack {
  template <typename Values>
  __device__ void operator()(int64_t, int64_t, int, const Values &) const {}
};

/// outputs.sums[k][c] = the sum of value k of column c over the rows r, for the calling
/// block's columns (a launch of columnSumsGrid(rows, cols, kColumns) blocks of
/// columnSumsBlock()). Each thread takes kColumns adjacent columns of a tile of
/// kColumnTile * kColumns: valuesAt(r, c, n, values) gives row r's values of columns
/// c .. c + n - 1 (n <= kColumns, fewer at the matrix's edge) as values[j][k], and is
/// called once for each row and group of columns. A thread asks for kRowsInFlight of its
/// rows before it adds the first of them, so that their loads are in flight together; a
/// kernel that also stores what it sums (a gradient beside its bias gradient) does so in
/// writeBack(r, c, n, values), called for each of those rows after all their valuesAt, so
/// that its stores do not order the loads. Each column's rows are added in the same order
/// whatever kColumns and kRowsInFlight are, so the sums have the same bits.
template <int kOutputs, int kColumns = 1, int kRowsInFlight = 1, typename ValuesAt,
          typename WriteBack = NoWriteBack>
__device__ void columnSums(const ValuesAt &valuesAt, int64_t rows, int64_t cols,
                           const ColumnSumOutputs<kOutputs> &outputs,
                           const WriteBack &writeBack = {}) {
  constexpr int kTileColumns = kColumnTile * kColumns;
  __shared__ float partial[kOutputs][kRowGroups][kTileColumns + 1];
  const int64_t slices = gridDim.y, tiles = (cols + kTileColumns - 1) / kTileColumns;
  const int64_t sliceRows = (rows + slices - 1) / slices;
  const int64_t begin = int64_t(blockIdx.y) * sliceRows;
  const int64_t end = begin + sliceRows < rows ? begin + sliceRows : rows;
  // The first of the calling thread's columns in `tile`, and how many of its kColumns the
  // matrix has.
  const auto firstColumn = [](int64_t tile) {
    return tile * kTileColumns + int64_t(threadIdx.x) * kColumns;
  };
  const auto columnsFrom = [cols](int64_t first) {
    return first < cols ? int(cols - first < kColumns ? cols - first : kColumns) : 0;
  };
  // Slice s's sum of output k's column c.
  const auto sliceSum = [&](int k, int64_t s, int64_t c) -> float & {
    return outputs.partials[(k * slices + s) * cols + c];
  };
  // Adds each group's sums of the thread's columns (from `partial`) in group order, and
  // stores them through store(k, c, total).
  const auto addGroups = [&](int64_t first, int columns, const auto &store) {
    for (int j = 0; j < columns; ++j)
#pragma unroll
      for (int k = 0; k < kOutputs; ++k) {
        float total = 0.0f;
        for (int g = 0; g < kRowGroups; ++g)
          total += partial[k][g][threadIdx.x * kColumns + j];
        store(k, first + j, total);
      }
  };
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t first = firstColumn(tile);
    const int columns = columnsFrom(first);
    float sums[kColumns][kOutputs] = {};
    if (columns > 0)
      for (int64_t r = begin + threadIdx.y; r < end; r += kRowGroups * kRowsInFlight) {
        // Rows past the slice add zeros, which leave every sum's bits as they are (a sum
        // starts at +0, so it is never -0).
        float values[kRowsInFlight][kColumns][kOutputs] = {};
        if (r + (kRowsInFlight - 1) * kRowGroups < end) {
#pragma unroll // constant indices keep `values` and `sums` in registers
          for (int m = 0; m < kRowsInFlight; ++m)
            valuesAt(r + m * kRowGroups, first, columns, values[m]);
        } else {
#pragma unroll
          for (int m = 0; m < kRowsInFlight; ++m)
            if (r + m * kRowGroups < end)
              valuesAt(r + m * kRowGroups, first, columns, values[m]);
        }
#pragma unroll
        for (int m = 0; m < kRowsInFlight; ++m)
          if (r + m * kRowGroups < end)
            writeBack(r + m * kRowGroups, first, columns, values[m]);
#pragma unroll
        for (int m = 0; m < kRowsInFlight; ++m)
#pragma unroll
          for (int j = 0; j < kColumns; ++j)
#pragma unroll
            for (int k = 0; k < kOutputs; ++k)
              if (j < columns)
                sums[j][k] += values[m][j][k];
      }
#pragma unroll
    for (int j = 0; j < kColumns; ++j)
#pragma unroll
      for (int k = 0; k < kOutputs; ++k)
        partial[k][threadIdx.y][threadIdx.x * kColumns + j] = sums[j][k];
    __syncthreads();
    if (threadIdx.y == 0)
      addGroups(first, columns, [&](int k, int64_t c, float total) {
        if (slices == 1)
          storeColumnSum(&outputs.sums[k][c], total, outputs.accumulate);
        else
          sliceSum(k, blockIdx.y, c) = total;
      });
    __syncthreads(); // `partial` is reused by the next tile
  }
  if (slices == 1)
    return;
  __threadfence(); // this block's slice sums reach every block before its ticket does
  if (!takesLastTicket(outputs.tickets))
    return;
  __threadfence();
  // Group g adds slices g, g + kRowGroups, ...; thread (x, 0) the groups, in order.
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t first = firstColumn(tile);
    const int columns = columnsFrom(first);
    for (int j = 0; j < kColumns; ++j)
#pragma unroll
      for (int k = 0; k < kOutputs; ++k) {
        float total = 0.0f;
        if (j < columns)
          for (int64_t s = threadIdx.y; s < slices; s += kRowGroups)
            total += __ldcg(&sliceSum(k, s, first + j)); // written by other blocks: not from L1
        partial[k][threadIdx.y][threadIdx.x * kColumns + j] = total;
      }
    __syncthreads();
    if (threadIdx.y == 0)
      addGroups(first, columns, [&](int k, int64_t c, float total) {
        storeColumnSum(&outputs.sums[k][c], total, outputs.accumulate);
      });
    __syncthreads();
  }
}

/// The grid of a column sum over [rows, cols] that takes `columns` columns a thread: one row
/// of blocks per row slice, at most kColumnSumTickets blocks per row (each a grid column
/// with a ticket of its own).
inline dim3 columnSumsGrid(int64_t rows, int64_t cols, int columns = 1) {
  const int64_t tileColumns = int64_t(kColumnTile) * columns;
  const int64_t tiles = (cols + tileColumns - 1) / tileColumns;
  return dim3(unsigned(tiles < kColumnSumTickets ? tiles : kColumnSumTickets),
              unsigned(columnSumSlices(rows)));
}

} // namespace bertc::cuda
