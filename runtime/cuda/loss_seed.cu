// The backward's seed on the device: one scalar, written on the step's stream.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"

#include "launch.cuh"

namespace bertc::cuda {

namespace {
__global__ void fillScalarKernel(float *out, float value) { *out = value; }
} // namespace

void fillScalar(float *out, float value, float scale, cudaStream_t stream) {
  BERTC_LAUNCH(fillScalarKernel, 1, 1, 0, stream, out, value * scale);
}

} // namespace bertc::cuda
