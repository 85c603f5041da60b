// The kernel behind gemm_pointer_arrays.cuh.
#include "gemm_pointer_arrays.cuh"

#include "launch.cuh"

namespace bertc::cuda {

namespace {

__device__ const void *matrixAt(const GroupedMatrices &operand, int64_t group, int64_t i) {
  return operand.base + group * operand.groupStride + i * operand.batchStride;
}

__global__ void fillPointerArraysKernel(const void **arrays, GroupedProducts products,
                                        int64_t firstUnit, int64_t total) {
  for (int64_t e = gridStrideBegin(); e < total; e += gridStride()) {
    const int64_t unit = firstUnit + e / products.count, i = e % products.count;
    const int64_t product = unit / products.groups, group = unit % products.groups;
    arrays[e] = matrixAt(products.a[product], group, i);
    arrays[total + e] = matrixAt(products.b[product], group, i);
    arrays[2 * total + e] = matrixAt(products.d[product], group, i);
  }
}

} // namespace

void fillPointerArrays(const void **arrays, const GroupedProducts &products, int64_t firstUnit,
                       int64_t total, cudaStream_t stream) {
  BERTC_LAUNCH(fillPointerArraysKernel, gridFor(total), kElementwiseThreads, 0, stream, arrays,
               products, firstUnit, total);
}

} // namespace bertc::cuda
