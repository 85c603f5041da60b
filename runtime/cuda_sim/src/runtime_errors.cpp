// Error state, error names and strings (NVIDIA's texts), and device faults.
#include "runtime_errors.h"

#include "bertc/cuda_sim/faults.h"

#include <cstdio>

namespace bertc::sim {

namespace {
cudaError_t lastError = cudaSuccess;
cudaError_t sticky = cudaSuccess;
std::vector<std::string> reports;
} // namespace

cudaError_t recordResult(cudaError_t result) {
  if (result != cudaSuccess)
    lastError = result;
  return result;
}

cudaError_t stickyError() { return sticky; }

void raiseDeviceFault(cudaError_t error, const std::string &report) {
  std::fprintf(stderr, "bertc simulated device: %s\n", report.c_str());
  reports.push_back(report);
  if (sticky == cudaSuccess)
    sticky = error;
  lastError = error;
}

const std::vector<std::string> &faultReports() { return reports; }

void clearDeviceFaults() {
  reports.clear();
  sticky = lastError = cudaSuccess;
}

} // namespace bertc::sim

cudaError_t cudaGetLastError() {
  const cudaError_t error = bertc::sim::lastError;
  bertc::sim::lastError = bertc::sim::stickyError();
  return error;
}

cudaError_t cudaPeekAtLastError() { return bertc::sim::lastError; }

const char *cudaGetErrorName(cudaError_t error) {
  switch (error) {
#define NAME(e)                                                                                    \
  case e:                                                                                          \
    return #e;
    NAME(cudaSuccess)
    NAME(cudaErrorInvalidValue)
    NAME(cudaErrorMemoryAllocation)
    NAME(cudaErrorInitializationError)
    NAME(cudaErrorInvalidConfiguration)
    NAME(cudaErrorInvalidDevicePointer)
    NAME(cudaErrorInvalidMemcpyDirection)
    NAME(cudaErrorInvalidDeviceFunction)
    NAME(cudaErrorNoDevice)
    NAME(cudaErrorInvalidDevice)
    NAME(cudaErrorNoKernelImageForDevice)
    NAME(cudaErrorInvalidResourceHandle)
    NAME(cudaErrorIllegalState)
    NAME(cudaErrorIllegalAddress)
    NAME(cudaErrorHostMemoryAlreadyRegistered)
    NAME(cudaErrorHostMemoryNotRegistered)
    NAME(cudaErrorMisalignedAddress)
    NAME(cudaErrorLaunchOutOfResources)
    NAME(cudaErrorLaunchFailure)
    NAME(cudaErrorStreamCaptureUnsupported)
    NAME(cudaErrorStreamCaptureInvalidated)
    NAME(cudaErrorStreamCaptureWrongThread)
    NAME(cudaErrorGraphExecUpdateFailure)
#undef NAME
  }
  return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  case cudaErrorInitializationError:
    return "initialization error";
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument";
  case cudaErrorInvalidDevicePointer:
    return "invalid device pointer";
  case cudaErrorInvalidMemcpyDirection:
    return "invalid copy direction for memcpy";
  case cudaErrorInvalidDeviceFunction:
    return "invalid device function";
  case cudaErrorNoDevice:
    return "no CUDA-capable device is detected";
  case cudaErrorInvalidDevice:
    return "invalid device ordinal";
  case cudaErrorNoKernelImageForDevice:
    return "no kernel image is available for execution on the device";
  case cudaErrorInvalidResourceHandle:
    return "invalid resource handle";
  case cudaErrorIllegalAddress:
    return "an illegal memory access was encountered";
  case cudaErrorHostMemoryAlreadyRegistered:
    return "part or all of the requested memory range is already mapped";
  case cudaErrorHostMemoryNotRegistered:
    return "pointer does not correspond to a registered memory region";
  case cudaErrorMisalignedAddress:
    return "misaligned address";
  case cudaErrorLaunchOutOfResources:
    return "too many resources requested for launch";
  case cudaErrorLaunchFailure:
    return "unspecified launch failure";
  case cudaErrorIllegalState:
    return "the operation cannot be performed in the present state";
  case cudaErrorStreamCaptureUnsupported:
    return "operation not permitted when stream is capturing";
  case cudaErrorStreamCaptureInvalidated:
    return "operation failed due to a previous error during capture";
  case cudaErrorStreamCaptureWrongThread:
    return "attempt to terminate a thread-local capture sequence from another thread";
  case cudaErrorGraphExecUpdateFailure:
    return "the graph update was not performed because it included changes which violated "
           "constraints specific to instantiated graph update";
  }
  return "unknown error";
}
