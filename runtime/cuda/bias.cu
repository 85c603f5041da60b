// Bias CUDA kernels: adding a bias to every row (where no GEMM epilogue does it) and the bias
// gradient, a deterministic column sum in one launch (column_sums.cuh).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "column_sums.cuh"
#include "device_storage.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
template <typename T>
__global__ void biasAddKernel(T *y, const T *bias, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride())
    storeFloat(y + i, loadFloat(y + i) + loadFloat(bias + i % cols));
}

template <typename T>
__global__ void __launch_bounds__(kColumnSumsThreads)
    biasBackwardKernel(const T *dy, int64_t rows, int64_t out, ColumnSumOutputs<1> db) {
  const auto valuesAt = [dy, out](int64_t r, int64_t c, int, float(&values)[1][1]) {
    values[0][0] = loadFloat(dy + r * out + c);
  };
  columnSums<1, 1, /*kRowsInFlight=*/8>(valuesAt, rows, out, db);
}
} // namespace

template <typename T>
void biasAdd(T *y, const T *bias, int64_t rows, int64_t cols, cudaStream_t stream) {
  BERTC_LAUNCH(biasAddKernel, gridFor(rows * cols), kElementwiseThreads, 0, stream, y, bias, rows,
               cols);
}

namespace {
/// db = (or, accumulating, +=) dy summed over rows.
template <typename T>
void launchBiasBackward(const T *dy, float *db, bool accumulate, float *partials, unsigned *tickets,
                        int64_t rows, int64_t out, cudaStream_t stream) {
  if (out == 0)
    return;
  BERTC_LAUNCH(biasBackwardKernel, columnSumsGrid(rows, out), columnSumsBlock(), 0, stream, dy,
               rows, out, ColumnSumOutputs<1>{{db}, accumulate, partials, tickets});
}
} // namespace

template <typename T>
void biasBackward(const T *dy, float *db, float *partials, unsigned *tickets, int64_t rows,
                  int64_t out, cudaStream_t stream) {
  launchBiasBackward(dy, db, /*accumulate=*/false, partials, tickets, rows, out, stream);
}

template <typename T>
void biasBackwardAccumulate(const T *dy, float *db, float *partials, unsigned *tickets,
                            int64_t rows, int64_t out, cudaStream_t stream) {
  launchBiasBackward(dy, db, /*accumulate=*/true, partials, tickets, rows, out, stream);
}

#define INSTANTIATE(T)                                                                             \
  template void biasAdd(T *, const T *, int64_t, int64_t, cudaStream_t);                           \
  template void biasBackward(const T *, float *, float *, unsigned *, int64_t, int64_t,            \
                             cudaStream_t);                                                        \
  template void biasBackwardAccumulate(const T *, float *, float *, unsigned *, int64_t, int64_t,  \
                                       cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
