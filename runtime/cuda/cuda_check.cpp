// The failure path of BERTC_CUDA_CHECK and BERTC_CUBLAS_CHECK (cuda_check.h).
#include "bertc/runtime/cuda_check.h"

namespace bertc::cuda {

namespace {
[[noreturn]] void fail(const char *call, const char *file, int line, const char *errorName,
                       const char *errorText) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call +
                  " failed: " + errorName + " (" + errorText + ")");
}
} // namespace

void checkCuda(cudaError_t status, const char *call, const char *file, int line) {
  if (status != cudaSuccess)
    fail(call, file, line, cudaGetErrorName(status), cudaGetErrorString(status));
}

void checkCublas(cublasStatus_t status, const char *call, const char *file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(call, file, line, cublasLtGetStatusName(status), cublasLtGetStatusString(status));
}

} // namespace bertc::cuda
