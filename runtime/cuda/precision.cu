// The kernels mixed precision adds on the GPU: conversion between storage types (bert.cast,
// and a 16-bit working copy after an update outside the chunk table's launch) and fp16 loss
// scaling's unscale with its overflow check.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
template <typename From, typename To>
__global__ void convertKernel(const From *from, To *to, int64_t n) {
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride())
    storeFloat(to + i, loadFloat(from + i));
}

// Checking after scaling also catches a finite gradient the scaling itself overflows. Only
// threads that saw a non-finite value write the flag, and they all write 1.
__global__ void unscaleGradientsKernel(float *grad, int64_t n, float inverseScale, int *nonFinite) {
  bool finite = true;
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride()) {
    const float scaled = grad[i] * inverseScale;
    grad[i] = scaled;
    finite &= isfinite(scaled);
  }
  // Any number of threads may find one; each sets the flag atomically.
  if (!finite)
    atomicExch(nonFinite, 1);
}
} // namespace

template <typename From, typename To>
void convert(const From *from, To *to, int64_t n, cudaStream_t stream) {
  BERTC_LAUNCH(convertKernel, gridFor(n), kElementwiseThreads, 0, stream, from, to, n);
}

void unscaleGradients(float *grad, int64_t n, float inverseScale, int *nonFinite,
                      cudaStream_t stream) {
  BERTC_CUDA_CHECK(cudaMemsetAsync(nonFinite, 0, sizeof(int), stream));
  BERTC_LAUNCH(unscaleGradientsKernel, gridFor(n), kElementwiseThreads, 0, stream, grad, n,
               inverseScale, nonFinite);
}

#define INSTANTIATE_CONVERT_TO(To)                                                                 \
  template void convert(const float *, To *, int64_t, cudaStream_t);                               \
  template void convert(const ::bertc::bf16 *, To *, int64_t, cudaStream_t);                       \
  template void convert(const ::bertc::fp16 *, To *, int64_t, cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE_CONVERT_TO)
#undef INSTANTIATE_CONVERT_TO

} // namespace bertc::cuda
