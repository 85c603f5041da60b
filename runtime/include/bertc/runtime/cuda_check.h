// Error checking for every CUDA runtime, cuBLAS and cuBLASLt call in bertc: a failed call
// throws CudaError naming the file:line, the call's text and the library's error string,
// so nothing ever continues past a failure. Every kernel launch (BERTC_LAUNCH, launch.cuh)
// is checked by checkLaunch: a bad launch configuration at once; a fault inside a kernel at
// the next synchronizing call, or at once, naming the kernel, when the environment sets
// BERTC_CUDA_SYNC_LAUNCHES=1 (slow: for finding which kernel faults).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace bertc::cuda {

/// A CUDA, cuBLAS or cuBLASLt call failed; what() reads "file:line: call: error".
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws CudaError unless `status` is cudaSuccess.
void checkCuda(cudaError_t status, const char *call, const char *file, int line);
/// Throws CudaError unless `status` is CUBLAS_STATUS_SUCCESS (cuBLAS and cuBLASLt share it).
void checkCublas(cublasStatus_t status, const char *call, const char *file, int line);
/// Checks the launch of `kernel` just made (a bad grid, too much shared memory, no device
/// code for this GPU's architecture) and, under BERTC_CUDA_SYNC_LAUNCHES=1, waits for the
/// kernel and checks how it ended.
void checkLaunch(const char *kernel, const char *file, int line);
/// Whether BERTC_CUDA_SYNC_LAUNCHES is set (and not "0"): checkLaunch then waits for each
/// kernel.
bool synchronousLaunches();

} // namespace bertc::cuda

/// Checks a CUDA runtime call: BERTC_CUDA_CHECK(cudaMemsetAsync(p, 0, n, stream)).
#define BERTC_CUDA_CHECK(call) ::bertc::cuda::checkCuda((call), #call, __FILE__, __LINE__)
/// Checks a cuBLAS or cuBLASLt call.
#define BERTC_CUBLAS_CHECK(call) ::bertc::cuda::checkCublas((call), #call, __FILE__, __LINE__)
