// Internal to the CUDA kernels: warp-wide sums and maxima. The butterfly (xor) pattern
// leaves the identical result in every lane, since each lane adds the same values in an
// order that only swaps operands of commutative additions.
#pragma once

namespace bertc::cuda {

__device__ __forceinline__ float warpSum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__device__ __forceinline__ double warpSum(double value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

/// The sum of `value` over each aligned group of Lanes adjacent lanes (a power of two up to a
/// warp), in every lane of the group; offset 1 first, the reverse of warpSum's order.
template <int Lanes> __device__ __forceinline__ float laneGroupSum(float value) {
#pragma unroll
  for (int offset = 1; offset < Lanes; offset *= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

/// The maximum of `value` over each aligned group of Lanes adjacent lanes, as laneGroupSum.
template <int Lanes> __device__ __forceinline__ float laneGroupMax(float value) {
#pragma unroll
  for (int offset = 1; offset < Lanes; offset *= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ __forceinline__ float warpMax(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

} // namespace bertc::cuda
