// RMSNorm over the last dimension on the GPU, as transformers' LlamaRMSNorm and the CPU twin
// (rms_norm.cpp). One warp per row; each lane sums its columns' squares in double and the
// warp adds the lanes' sums (warpSum), so r rounds to the CPU's fp32 value but where the two
// orders of the double sum differ in the last bit. The backward's row kernel recomputes r
// (the IR keeps no forward's), writes dx and leaves r in `rstd` ([rows]) for the column
// kernel, which sums the weight gradient one column a thread, in row order as the CPU does.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "launch.cuh"
#include "warp_reduce.cuh"

namespace bertc::cuda {

namespace {
constexpr int kWarpSize = 32;
constexpr int kRowsPerBlock = 8;

/// r = 1 / sqrt(mean(x^2) + eps) of one row by its warp (this lane's `lane`).
template <typename T> __device__ float rowRstd(const T *x, int64_t cols, int lane, float eps) {
  double squares = 0.0;
  for (int64_t c = lane; c < cols; c += kWarpSize) {
    const double value = loadFloat(x + c);
    squares += value * value;
  }
  return float(1.0 / sqrt(warpSum(squares) / double(cols) + double(eps)));
}

/// The row a warp of a kRowsPerBlock-warp block takes, and its lane.
__device__ __forceinline__ int64_t warpRow() {
  return int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarpSize;
}

template <typename T>
__global__ void rmsNormForwardKernel(const T *x, const T *weight, T *y, int64_t rows, int64_t cols,
                                     float eps) {
  const int64_t row = warpRow();
  const int lane = int(threadIdx.x % kWarpSize);
  if (row >= rows)
    return;
  const T *xRow = x + row * cols;
  T *yRow = y + row * cols;
  const float rstd = rowRstd(xRow, cols, lane, eps);
  for (int64_t c = lane; c < cols; c += kWarpSize)
    storeFloat(yRow + c, loadFloat(weight + c) * roundedTo<T>(loadFloat(xRow + c) * rstd));
}

/// dx = r (g - x r mean(g x r)) with g = dy w, and r into rstd[row].
template <typename T>
__global__ void rmsNormBackwardRowsKernel(const T *dy, const T *x, const T *weight, T *dx,
                                          float *rstd, int64_t rows, int64_t cols, float eps) {
  const int64_t row = warpRow();
  const int lane = int(threadIdx.x % kWarpSize);
  if (row >= rows)
    return;
  const T *dyRow = dy + row * cols, *xRow = x + row * cols;
  T *dxRow = dx + row * cols;
  const float r = rowRstd(xRow, cols, lane, eps);
  double sumGXhat = 0.0;
  for (int64_t c = lane; c < cols; c += kWarpSize)
    sumGXhat += double(loadFloat(dyRow + c) * loadFloat(weight + c)) * (loadFloat(xRow + c) * r);
  const float meanGXhat = float(warpSum(sumGXhat) / double(cols));
  for (int64_t c = lane; c < cols; c += kWarpSize) {
    const float g = loadFloat(dyRow + c) * loadFloat(weight + c);
    storeFloat(dxRow + c, r * (g - loadFloat(xRow + c) * r * meanGXhat));
  }
  if (lane == 0)
    rstd[row] = r;
}

/// dweight[c] = the sum over rows, in order, of dy * round(x r).
template <typename T>
__global__ void rmsNormWeightGradientKernel(const T *dy, const T *x, const float *rstd,
                                            float *dweight, int64_t rows, int64_t cols) {
  const int64_t c = gridStrideBegin();
  if (c >= cols)
    return;
  float sum = 0.0f;
  for (int64_t r = 0; r < rows; ++r)
    sum += loadFloat(dy + r * cols + c) * roundedTo<T>(loadFloat(x + r * cols + c) * rstd[r]);
  dweight[c] = sum;
}

unsigned rowBlocks(int64_t rows) { return unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock); }
} // namespace

template <typename T>
void rmsNormForward(const T *x, const T *weight, T *y, int64_t rows, int64_t cols, float eps,
                    cudaStream_t stream) {
  if (rows == 0)
    return;
  BERTC_LAUNCH(rmsNormForwardKernel, rowBlocks(rows), kRowsPerBlock * kWarpSize, 0, stream, x,
               weight, y, rows, cols, eps);
}

template <typename T>
void rmsNormBackward(const T *dy, const T *x, const T *weight, T *dx, float *dweight, float *rstd,
                     int64_t rows, int64_t cols, float eps, cudaStream_t stream) {
  if (rows > 0)
    BERTC_LAUNCH(rmsNormBackwardRowsKernel, rowBlocks(rows), kRowsPerBlock * kWarpSize, 0, stream,
                 dy, x, weight, dx, rstd, rows, cols, eps);
  BERTC_LAUNCH(rmsNormWeightGradientKernel,
               unsigned((cols + kElementwiseThreads - 1) / kElementwiseThreads),
               kElementwiseThreads, 0, stream, dy, x, rstd, dweight, rows, cols);
}

#define INSTANTIATE(T)                                                                             \
  template void rmsNormForward(const T *, const T *, T *, int64_t, int64_t, float, cudaStream_t);  \
  template void rmsNormBackward(const T *, const T *, const T *, T *, float *, float *, int64_t,   \
                                int64_t, float, cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
