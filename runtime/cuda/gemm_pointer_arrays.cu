// The kernel behind gemm_pointer_arrays.cuh.
#include "gemm_pointer_arrays.cuh"

#include "launch.cuh"

namespace bertc::cuda {

namespace {

__device__ const void *matrixAt(const GroupedMatrices &operand, int64_t group, int64_t i) {
  return operand.base + group * operand.groupStride + i * operand.batchStride;
}

__global__ void fillPointerArraysKernel(const void **arrays, GroupedMatrices a, GroupedMatrices b,
                                        GroupedMatrices d, int64_t count, int64_t total) {
  for (int64_t e = gridStrideBegin(); e < total; e += gridStride()) {
    const int64_t group = e / count, i = e % count;
    arrays[e] = matrixAt(a, group, i);
    arrays[total + e] = matrixAt(b, group, i);
    arrays[2 * total + e] = matrixAt(d, group, i);
  }
}

} // namespace

void fillPointerArrays(const void **arrays, const GroupedMatrices &a, const GroupedMatrices &b,
                       const GroupedMatrices &d, int64_t count, int64_t total,
                       cudaStream_t stream) {
  BERTC_LAUNCH(fillPointerArraysKernel, gridFor(total), kElementwiseThreads, 0, stream, arrays, a,
               b, d, count, total);
}

} // namespace bertc::cuda
