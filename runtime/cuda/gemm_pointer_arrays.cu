// The kernel behind gemm_pointer_arrays.cuh.
#include "gemm_pointer_arrays.cuh"

#include "launch.cuh"

namespace bertc::cuda {

namespace {

__device__ const void *matrixAt(const GroupedMatrices &operand, int64_t group, int64_t i) {
  return operand.groupBase(group) + i * operand.batchStride;
}

__global__ void fillPointerArraysKernel(const void **arrays, PointerArrayFill fill) {
  for (int64_t e = gridStrideBegin(); e < fill.entries; e += gridStride()) {
    int c = 0;
    while (c + 1 < fill.count && e >= fill.calls[c + 1].firstEntry)
      ++c;
    const PointerArrayCall &call = fill.calls[c];
    const GroupedProducts &products = call.products;
    const int64_t entry = e - call.firstEntry;
    const int64_t unit = call.firstUnit + entry / products.count, i = entry % products.count;
    const int64_t product = unit / products.groups, group = unit % products.groups;
    const void **callArrays = arrays + 3 * call.firstEntry;
    callArrays[entry] = matrixAt(products.a[product], group, i);
    callArrays[call.total + entry] = matrixAt(products.b[product], group, i);
    callArrays[2 * call.total + entry] = matrixAt(products.d[product], group, i);
  }
}

} // namespace

void fillPointerArrays(const void **arrays, const PointerArrayFill &fill, cudaStream_t stream) {
  BERTC_LAUNCH(fillPointerArraysKernel, gridFor(fill.entries), kElementwiseThreads, 0, stream,
               arrays, fill);
}

} // namespace bertc::cuda
