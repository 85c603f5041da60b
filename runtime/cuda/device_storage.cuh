// Internal to the CUDA kernels: loads and stores of the storage types in device code, and
// the list of types every templated kernel is instantiated for. bertc::bf16 and bertc::fp16
// (half_types.h) have the bit layout of __nv_bfloat16 and __half, so device code converts
// with CUDA's round-to-nearest-even intrinsics (one instruction where the GPU has it), which
// round exactly as half_types.h does on the host.
#pragma once

#include "bertc/runtime/half_types.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

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

/// Values of T in one 16-byte access.
template <typename T> constexpr int kVectorValues = int(16 / sizeof(T));

/// The CUDA type of a storage type's values (the same bits; a plain type such as float or
/// a mask word is its own), which the vector accesses below read and write so that no value
/// is read through another type.
template <typename T> struct CudaValue {
  using type = T;
};
template <> struct CudaValue<bf16> {
  using type = __nv_bfloat16;
};
template <> struct CudaValue<fp16> {
  using type = __half;
};

__device__ __forceinline__ float valueAsFloat(float v) { return v; }
__device__ __forceinline__ float valueAsFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float valueAsFloat(__half v) { return __half2float(v); }

/// `value` rounded to a CUDA value type (nearest even), as storeRounded rounds it.
__device__ __forceinline__ void roundInto(float &out, float value) { out = value; }
__device__ __forceinline__ void roundInto(__nv_bfloat16 &out, float value) {
  out = __float2bfloat16_rn(value);
}
__device__ __forceinline__ void roundInto(__half &out, float value) {
  out = __float2half_rn(value);
}

/// Whether N values of T make one access (8 or 16 bytes).
template <typename T, int N>
constexpr bool kVectorSized = N * sizeof(T) == 8 || N * sizeof(T) == 16;

/// N values of T moved by one access of their size (kVectorSized).
template <typename T, int N> struct alignas(N * sizeof(T)) Vector {
  static_assert(kVectorSized<T, N>, "a vector is 8 or 16 bytes");
  typename CudaValue<T>::type values[N];
};

/// Whether the N values of T at p move as one Vector: all N wanted (`count`) and p aligned
/// to their size (an arena slot need not be).
template <int N, typename T> __device__ __forceinline__ bool asVector(const T *p, int count) {
  return count == N && reinterpret_cast<uintptr_t>(p) % (N * sizeof(T)) == 0;
}

/// out[j] = p[j] for j < count (N or fewer; the rest V{}), of a CUDA value type V (mask
/// words, floats, __nv_bfloat16, ...): one access where they make a Vector and asVector
/// allows, else a load each.
template <int N, typename V>
__device__ __forceinline__ void loadValues(const V *p, int count, V (&out)[N]) {
  if constexpr (kVectorSized<V, N>) {
    if (asVector<N>(p, count)) {
      const Vector<V, N> vector = *reinterpret_cast<const Vector<V, N> *>(p);
#pragma unroll
      for (int j = 0; j < N; ++j)
        out[j] = vector.values[j];
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < N; ++j)
    out[j] = j < count ? p[j] : V{};
}

/// out[j] = the value at p + j as a float, for j < count (N or fewer, at a matrix's edge;
/// the rest 0): loadValues of T's CUDA values, widened.
template <int N, typename T>
__device__ __forceinline__ void loadFloats(const T *p, int count, float (&out)[N]) {
  using Value = typename CudaValue<T>::type;
  Value values[N];
  loadValues(reinterpret_cast<const Value *>(p), count, values);
#pragma unroll
  for (int j = 0; j < N; ++j)
    out[j] = valueAsFloat(values[j]); // V{} past count: 0
}

/// Stores values[j] rounded to T at p + j for j < count, as loadFloats reads them (one
/// store where asVector allows), and leaves the stored values in `values`.
template <int N, typename T>
__device__ __forceinline__ void storeRoundedFloats(T *p, int count, float (&values)[N]) {
  if constexpr (kVectorSized<T, N>) {
    if (asVector<N>(p, count)) {
      Vector<T, N> vector;
#pragma unroll
      for (int j = 0; j < N; ++j) {
        roundInto(vector.values[j], values[j]);
        values[j] = valueAsFloat(vector.values[j]);
      }
      *reinterpret_cast<Vector<T, N> *>(p) = vector;
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < N; ++j)
    if (j < count)
      values[j] = storeRounded(p + j, values[j]);
}

} // namespace bertc::cuda

#define BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)                                              \
  INSTANTIATE(float)                                                                               \
  INSTANTIATE(::bertc::bf16)                                                                       \
  INSTANTIATE(::bertc::fp16)
