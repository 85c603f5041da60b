// The check a CUDA trainer makes before step 1: does the device have the memory the plan
// needs? bertc allocates everything once at start-up, so a plan that does not fit is
// refused here, with both numbers, instead of failing later with "out of memory".
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace bertc::cuda {

/// The device cannot hold the plan; what() names the plan's bytes and the device's free and
/// total bytes.
struct DeviceMemoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Free and total bytes of the current device, as cudaMemGetInfo reports them.
struct DeviceMemory {
  size_t freeBytes;
  size_t totalBytes;
};

/// Queries the current device (checked: throws CudaError when there is no usable device).
DeviceMemory deviceMemory();

/// Throws DeviceMemoryError when the current device has fewer than `planBytes` free bytes.
/// planBytes is what the trainer is about to allocate (the arena, cuBLASLt workspace
/// included); the CUDA context already exists when free memory is measured, so the plan's
/// context reserve is not part of it.
void requireDeviceMemory(size_t planBytes);

/// The message requireDeviceMemory throws with; empty when the plan fits.
std::string deviceMemoryShortfall(size_t planBytes, const DeviceMemory &device);

} // namespace bertc::cuda
