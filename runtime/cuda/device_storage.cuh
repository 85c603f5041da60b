// Internal to the CUDA kernels: loads and stores of the storage types in device code, and
// the list of types every templated kernel is instantiated for. bertc::bf16 and bertc::fp16
// (half_types.h) have the bit layout of __nv_bfloat16 and __half, so device code converts
// with CUDA's round-to-nearest-even intrinsics (one instruction where the GPU has it), which
// round exactly as half_types.h does on the host.
#pragma once

#include "bertc/runtime/half_types.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace bertc::cuda {

__device__ __forceinline__ float loadFloat(const float *p) { return *p; }
__device__ __forceinline__ float loadFloat(const bf16 *p) {
  return __bfloat162float(*reinterpret_cast<const __nv_bfloat16 *>(p));
}
__device__ __forceinline__ float loadFloat(const fp16 *p) {
  return __half2float(*reinterpret_cast<const __half *>(p));
}

/// Stores `value` rounded to the storage type (nearest even), returning the stored value as
/// loadFloat(p) reads it back.
__device__ __forceinline__ float storeRounded(float *p, float value) {
  *p = value;
  return value;
}
__device__ __forceinline__ float storeRounded(bf16 *p, float value) {
  const __nv_bfloat16 stored = __float2bfloat16_rn(value);
  *reinterpret_cast<__nv_bfloat16 *>(p) = stored;
  return __bfloat162float(stored);
}
__device__ __forceinline__ float storeRounded(fp16 *p, float value) {
  const __half stored = __float2half_rn(value);
  *reinterpret_cast<__half *>(p) = stored;
  return __half2float(stored);
}

/// `value` rounded to the storage type T, as storeRounded stores it.
template <typename T> __device__ __forceinline__ float roundedTo(float value);
template <> __device__ __forceinline__ float roundedTo<float>(float value) { return value; }
template <> __device__ __forceinline__ float roundedTo<bf16>(float value) {
  return __bfloat162float(__float2bfloat16_rn(value));
}
template <> __device__ __forceinline__ float roundedTo<fp16>(float value) {
  return __half2float(__float2half_rn(value));
}

template <typename T> __device__ __forceinline__ void storeFloat(T *p, float value) {
  (void)storeRounded(p, value);
}

} // namespace bertc::cuda

#define BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)                                              \
  INSTANTIATE(float)                                                                               \
  INSTANTIATE(::bertc::bf16)                                                                       \
  INSTANTIATE(::bertc::fp16)
