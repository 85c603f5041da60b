// AdamW on the GPU over every trainable parameter in one launch: one block per chunk
// (a piece of one parameter, adamwChunks), so a parameter of any size spreads over many
// blocks and the decay flag is uniform within a block. Each updated master is rounded into
// its 16-bit working copy in the same pass, so the masters are read once. An update in the
// backward runs on one parameter, as soon as its gradient is complete, a launch of its own
// that rounds its working copy in the same way.
// Each element runs adamwElement (adamw_element.cuh), the CPU twin's operations in the same
// order: CPU and GPU updates agree bit for bit.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "adamw_element.cuh"
#include "device_storage.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
constexpr int kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    adamwKernel(float *params, const float *grads, float *m, float *v, T *workingCopies,
                const AdamWChunk *chunks, AdamWScalars s) {
  const AdamWChunk chunk = chunks[blockIdx.x];
  const float decayFactor = chunk.decay ? s.decayFactor : 1.0f;
  float *param = params + chunk.paramOffset;
  const float *grad = grads + chunk.stateOffset;
  float *m1 = m + chunk.stateOffset, *v1 = v + chunk.stateOffset;
  T *working = chunk.workingOffset < 0 ? nullptr : workingCopies + chunk.workingOffset;
  for (int i = threadIdx.x; i < chunk.count; i += kThreads) {
    adamwElement(param[i], grad[i], m1[i], v1[i], s, decayFactor);
    if (working)
      storeFloat(working + i, param[i]);
  }
}

/// One parameter; `working`, if not null, gets each updated value rounded to T.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    adamwParameterKernel(float *param, const float *grad, float *m, float *v, T *working, int64_t n,
                         AdamWScalars s) {
  for (int64_t i = gridStrideBegin(); i < n; i += gridStride()) {
    adamwElement(param[i], grad[i], m[i], v[i], s, s.decayFactor);
    if (working)
      storeFloat(working + i, param[i]);
  }
}

/// A launch of adamwParameterKernel.
template <typename T>
void updateParameter(float *param, const float *grad, float *m, float *v, T *working, int64_t n,
                     const cpu::AdamWConfig &config, cudaStream_t stream) {
  if (n == 0)
    return;
  BERTC_LAUNCH(adamwParameterKernel<T>, gridFor(n, kThreads), kThreads, 0, stream, param, grad, m,
               v, working, n, adamwScalars(config));
}
} // namespace

template <typename T>
void adamwUpdate(float *params, const float *grads, float *m, float *v, T *workingCopies,
                 const AdamWChunk *chunks, int64_t chunkCount, const cpu::AdamWConfig &config,
                 cudaStream_t stream) {
  if (chunkCount == 0)
    return;
  BERTC_LAUNCH(adamwKernel<T>, unsigned(chunkCount), kThreads, 0, stream, params, grads, m, v,
               workingCopies, chunks, adamwScalars(config));
}

void adamwUpdate(float *params, const float *grads, float *m, float *v, const AdamWChunk *chunks,
                 int64_t chunkCount, const cpu::AdamWConfig &config, cudaStream_t stream) {
  // No chunk has a working copy, so the kernel never stores through the null pointer.
  adamwUpdate(params, grads, m, v, static_cast<bf16 *>(nullptr), chunks, chunkCount, config,
              stream);
}

void adamwUpdate(float *param, const float *grad, float *m, float *v, int64_t n,
                 const cpu::AdamWConfig &config, cudaStream_t stream) {
  // No working copy: the kernel never stores through the null pointer.
  updateParameter(param, grad, m, v, static_cast<bf16 *>(nullptr), n, config, stream);
}

void adamwUpdate(float *master, const float *grad, float *m, float *v, bf16 *working, int64_t n,
                 const cpu::AdamWConfig &config, cudaStream_t stream) {
  updateParameter(master, grad, m, v, working, n, config, stream);
}

void adamwUpdate(float *master, const float *grad, float *m, float *v, fp16 *working, int64_t n,
                 const cpu::AdamWConfig &config, cudaStream_t stream) {
  updateParameter(master, grad, m, v, working, n, config, stream);
}

template void adamwUpdate(float *, const float *, float *, float *, ::bertc::bf16 *,
                          const AdamWChunk *, int64_t, const cpu::AdamWConfig &, cudaStream_t);
template void adamwUpdate(float *, const float *, float *, float *, ::bertc::fp16 *,
                          const AdamWChunk *, int64_t, const cpu::AdamWConfig &, cudaStream_t);

} // namespace bertc::cuda
