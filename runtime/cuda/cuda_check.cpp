// The failure path of BERTC_CUDA_CHECK and BERTC_CUBLAS_CHECK (cuda_check.h).
#include "bertc/runtime/cuda_check.h"

#include <cstdlib>
#include <cstring>

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

bool synchronousLaunches() {
  static const bool synchronize = [] {
    const char *value = std::getenv("BERTC_CUDA_SYNC_LAUNCHES");
    return value && std::strcmp(value, "0") != 0;
  }();
  return synchronize;
}

void checkLaunch(const char *kernel, const char *file, int line) {
  const std::string call = std::string("launch of ") + kernel;
  checkCuda(cudaGetLastError(), call.c_str(), file, line);
  if (synchronousLaunches())
    checkCuda(cudaDeviceSynchronize(), (call + " (run with BERTC_CUDA_SYNC_LAUNCHES)").c_str(),
              file, line);
}

} // namespace bertc::cuda
