// The simulated runtime's error state, as CUDA keeps it: the last error of the calls made
// (read and reset by cudaGetLastError), and a sticky error after a device fault, which
// every later call returns.
#pragma once

#include <cuda_runtime_api.h>

namespace bertc::sim {

/// Records a call's result as the last error (unless it is cudaSuccess) and returns it.
cudaError_t recordResult(cudaError_t result);

/// The sticky error of a faulted device, or cudaSuccess. Every API call begins with it.
cudaError_t stickyError();

} // namespace bertc::sim
