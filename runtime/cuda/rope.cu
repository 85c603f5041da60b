// Rotary position embeddings on the GPU, as the CPU twin (rope.cpp): one thread per token and
// rotated pair index i computes the angle float(position) * inv_freq[i] and its fp32
// sincosf once and rotates that pair in every head, in fp32 rounded once. The frequencies
// travel by value in the kernel's parameters (at most kRopeMaxFrequencies, abi/rope.h).
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "device_storage.cuh"
#include "launch.cuh"

#include <string>

namespace bertc::cuda {

namespace {
/// A bert.rope's inverse frequencies, passed by value.
struct Frequencies {
  float values[kRopeMaxFrequencies];
};

template <typename T>
__global__ void rotatePairsKernel(const T *in, const int32_t *positions, T *out, int64_t tokens,
                                  int64_t heads, int64_t half, Frequencies invFreq, float sign) {
  const int64_t headDim = 2 * half, cols = heads * headDim;
  for (int64_t k = gridStrideBegin(); k < tokens * half; k += gridStride()) {
    const int64_t t = k / half, i = k % half;
    float sine = 0.0f, cosine = 0.0f;
    sincosf(float(positions[t]) * invFreq.values[i], &sine, &cosine);
    sine *= sign;
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t first = t * cols + h * headDim + i;
      const float x1 = loadFloat(in + first), x2 = loadFloat(in + first + half);
      storeFloat(out + first, x1 * cosine - x2 * sine);
      storeFloat(out + first + half, x2 * cosine + x1 * sine);
    }
  }
}

template <typename T>
void rotatePairs(const T *in, const int32_t *positions, T *out, int64_t tokens, int64_t heads,
                 int64_t headDim, const float *invFreq, float sign, cudaStream_t stream) {
  const int64_t half = headDim / 2;
  if (half > kRopeMaxFrequencies)
    throw CudaError("rope: head_dim " + std::to_string(headDim) + " exceeds twice " +
                    std::to_string(kRopeMaxFrequencies) + " inverse frequencies");
  Frequencies frequencies{};
  for (int64_t i = 0; i < half; ++i)
    frequencies.values[i] = invFreq[i];
  BERTC_LAUNCH(rotatePairsKernel, gridFor(tokens * half), kElementwiseThreads, 0, stream, in,
               positions, out, tokens, heads, half, frequencies, sign);
}
} // namespace

template <typename T>
void ropeForward(const T *x, const int32_t *positions, T *y, int64_t tokens, int64_t heads,
                 int64_t headDim, const float *invFreq, cudaStream_t stream) {
  rotatePairs(x, positions, y, tokens, heads, headDim, invFreq, 1.0f, stream);
}

template <typename T>
void ropeBackward(const T *dy, const int32_t *positions, T *dx, int64_t tokens, int64_t heads,
                  int64_t headDim, const float *invFreq, cudaStream_t stream) {
  rotatePairs(dy, positions, dx, tokens, heads, headDim, invFreq, -1.0f, stream);
}

#define INSTANTIATE(T)                                                                             \
  template void ropeForward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t,            \
                            const float *, cudaStream_t);                                          \
  template void ropeBackward(const T *, const int32_t *, T *, int64_t, int64_t, int64_t,           \
                             const float *, cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE)
#undef INSTANTIATE

} // namespace bertc::cuda
