// The start-up check that the device can hold the plan (cuda_memory.h).
#include "bertc/runtime/cuda_memory.h"

#include "bertc/runtime/cuda_check.h"

#include <cstdio>

namespace bertc::cuda {

namespace {
/// "1234567890 bytes (1.15 GiB)".
std::string bytesText(size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%zu bytes (%.2f GiB)", bytes,
                double(bytes) / double(size_t(1) << 30));
  return text;
}
} // namespace

DeviceMemory deviceMemory() {
  DeviceMemory memory{};
  BERTC_CUDA_CHECK(cudaMemGetInfo(&memory.freeBytes, &memory.totalBytes));
  return memory;
}

std::string deviceMemoryShortfall(size_t planBytes, const DeviceMemory &device) {
  if (planBytes <= device.freeBytes)
    return {};
  return "the plan needs " + bytesText(planBytes) + " of device memory but the device has " +
         bytesText(device.freeBytes) + " free (of " + bytesText(device.totalBytes) +
         "); compile for a smaller --vram or free the device";
}

void requireDeviceMemory(size_t planBytes) {
  const std::string shortfall = deviceMemoryShortfall(planBytes, deviceMemory());
  if (!shortfall.empty())
    throw DeviceMemoryError(shortfall);
}

} // namespace bertc::cuda
