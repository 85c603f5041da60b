// Dropout on the GPU from the counter-based generator (counter_rng.h): element i of row r is
// kept when dropoutKeep(key, r, i, rate), exactly as on the CPU, so the masks are
// bit-identical and the backward (or a recomputed forward) regenerates them without storage.
// A thread takes a group of four consecutive elements of a row, which one Philox call decides
// (dropoutKeepGroup), and moves them with one access where aligned.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
// Forward and backward are the same map (multiply by the scaled mask).
template <typename T>
__global__ void applyDropoutMaskKernel(const T *in, T *out, int64_t rows, int64_t rowSize,
                                       float rate, float keptScale, DropoutKey key) {
  const int64_t groupsPerRow = (rowSize + kDropoutGroupSize - 1) / kDropoutGroupSize;
  const int64_t groups = rows * groupsPerRow;
  for (int64_t g = gridStrideBegin(); g < groups; g += gridStride()) {
    const int64_t row = g / groupsPerRow, group = g - row * groupsPerRow;
    const uint32_t kept = dropoutKeepGroup(key, row, uint64_t(group), rate);
    const int64_t first = group * kDropoutGroupSize, i = row * rowSize + first;
    const int count =
        int(rowSize - first < kDropoutGroupSize ? rowSize - first : kDropoutGroupSize);
    float values[kDropoutGroupSize];
    loadFloats(in + i, count, values);
#pragma unroll
    for (int k = 0; k < kDropoutGroupSize; ++k)
      values[k] = (kept >> k) & 1u ? values[k] * keptScale : 0.0f;
    storeRoundedFloats(out + i, count, values);
  }
}

template <typename T>
void applyDropoutMask(const T *in, T *out, int64_t rows, int64_t rowSize, float rate,
                      const DropoutKey &key, cudaStream_t stream) {
  const int64_t n = rows * rowSize;
  if (rate == 0.0f) {
    if (in != out)
      BERTC_CUDA_CHECK(
          cudaMemcpyAsync(out, in, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const float keptScale = 1.0f / (1.0f - rate);
  const int64_t groups = rows * ((rowSize + kDropoutGroupSize - 1) / kDropoutGroupSize);
  BERTC_LAUNCH(applyDropoutMaskKernel, gridFor(groups), kElementwiseThreads, 0, stream, in, out,
               rows, rowSize, rate, keptScale, key);
}
} // namespace

template <typename T>
void dropoutForward(const T *x, T *y, int64_t rows, int64_t rowSize, float rate,
                    const DropoutKey &key, cudaStream_t stream) {
  applyDropoutMask(x, y, rows, rowSize, rate, key, stream);
}

template <typename T>
void dropoutBackward(const T *dy, T *dx, int64_t rows, int64_t rowSize, float rate,
                     const DropoutKey &key, cudaStream_t stream) {
  applyDropoutMask(dy, dx, rows, rowSize, rate, key, stream);
}

#define INSTANTIATE(T)                                                                             \
  template void dropoutForward(const T *, T *, int64_t, int64_t, float, const DropoutKey &,        \
                               cudaStream_t);                                                      \
  template void dropoutBackward(const T *, T *, int64_t, int64_t, float, const DropoutKey &,       \
                                cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
