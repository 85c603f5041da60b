// The simulated device's memory: cudaMalloc takes host memory while the device's capacity
// allows, as a real device's does, and remembers every allocation so that copies, the
// simulated libraries and the checkers can tell device addresses from host ones.
//
// The capacity is BERTC_SIM_DEVICE_MEMORY when set (bytes, or with KB/MB/GB/KiB/MiB/GiB),
// otherwise the budget of a trainer that bertc built for the cuda-sim target (it defines
// bertc_sim_device_bytes), and 16 GiB for other programs (the kernel tests). The simulated context
// and libraries take no device memory, so everything in use is the program's own.
#include "device_memory_state.h"
#include "graph_capture.h"
#include "runtime_errors.h"

#include "bertc/cuda_sim/device_memory.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

// Defined by a trainer built for the cuda-sim target; a weak reference, null elsewhere.
extern "C" __attribute__((weak)) const unsigned long long bertc_sim_device_bytes;

namespace bertc::sim {

namespace {
constexpr size_t kAllocationAlignment = 256; // as cudaMalloc's
constexpr size_t kDefaultCapacity = size_t(16) << 30;

/// BERTC_SIM_DEVICE_MEMORY's value in bytes; exits with a message when it is malformed.
size_t capacityFromEnvironment(const char *text) {
  char *end = nullptr;
  const double number = std::strtod(text, &end);
  const std::string unit = end;
  const std::map<std::string, double> units = {{"", 1},          {"B", 1},        {"KB", 1e3},
                                               {"MB", 1e6},      {"GB", 1e9},     {"KiB", 1024},
                                               {"MiB", 1 << 20}, {"GiB", 1 << 30}};
  const auto scale = units.find(unit);
  if (end == text || !(number >= 0) || scale == units.end()) {
    std::fprintf(stderr,
                 "bertc simulated device: BERTC_SIM_DEVICE_MEMORY=%s is not a size (e.g. "
                 "6GB, 512MiB or a number of bytes)\n",
                 text);
    std::exit(2);
  }
  return size_t(number * scale->second);
}

struct DeviceMemory {
  size_t capacity = 0, used = 0, peak = 0, allocations = 0;
  /// address -> bytes asked for (what accesses are checked against, as compute-sanitizer
  /// does) and bytes taken (rounded up to the allocation granule)
  std::map<uintptr_t, std::pair<size_t, size_t>> live;

  DeviceMemory() {
    const char *text = std::getenv("BERTC_SIM_DEVICE_MEMORY");
    capacity = text                      ? capacityFromEnvironment(text)
               : &bertc_sim_device_bytes ? size_t(bertc_sim_device_bytes)
                                         : kDefaultCapacity;
  }
  ~DeviceMemory() {
    std::fprintf(stderr, "bertc simulated device: peak %zu bytes in use of %zu (%zu allocations)\n",
                 peak, capacity, allocations);
  }

  /// The live allocation holding `address`, or live.end().
  auto holding(uintptr_t address) const {
    auto after = live.upper_bound(address);
    if (after == live.begin())
      return live.end();
    auto candidate = std::prev(after);
    return address < candidate->first + candidate->second.first ? candidate : live.end();
  }
};

DeviceMemory &memory() {
  static DeviceMemory instance;
  return instance;
}

size_t roundedUp(size_t bytes) {
  return (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
}
} // namespace

DeviceRange deviceAllocationAt(const void *pointer) {
  const auto allocation = memory().holding(reinterpret_cast<uintptr_t>(pointer));
  if (allocation == memory().live.end())
    return {};
  return {allocation->first, allocation->first + allocation->second.first};
}

bool isDeviceRange(const void *pointer, size_t bytes) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  const auto allocation = memory().holding(address);
  return allocation != memory().live.end() &&
         bytes <= allocation->first + allocation->second.first - address;
}

size_t deviceCapacity() { return memory().capacity; }

} // namespace bertc::sim

using bertc::sim::memory;

cudaError_t cudaMalloc(void **pointer, size_t bytes) {
  if (cudaError_t sticky = bertc::sim::stickyError())
    return sticky;
  if (cudaError_t refused = bertc::sim::refuseUnsafeCall())
    return refused;
  if (!pointer)
    return bertc::sim::recordResult(cudaErrorInvalidValue);
  *pointer = nullptr;
  if (bytes == 0)
    return cudaSuccess;
  auto &device = memory();
  const size_t rounded = bertc::sim::roundedUp(bytes);
  if (rounded > device.capacity - device.used)
    return bertc::sim::recordResult(cudaErrorMemoryAllocation);
  void *allocation = std::aligned_alloc(bertc::sim::kAllocationAlignment, rounded);
  if (!allocation)
    return bertc::sim::recordResult(cudaErrorMemoryAllocation);
  // Fresh device memory holds whatever was there before: all-ones bytes are NaN in every
  // float format, so a read of memory nothing wrote shows in the results.
  std::memset(allocation, 0xff, rounded);
  device.live.emplace(reinterpret_cast<uintptr_t>(allocation), std::pair(bytes, rounded));
  device.used += rounded;
  device.peak = std::max(device.peak, device.used);
  ++device.allocations;
  *pointer = allocation;
  return cudaSuccess;
}

cudaError_t cudaFree(void *pointer) {
  if (cudaError_t sticky = bertc::sim::stickyError())
    return sticky;
  if (cudaError_t refused = bertc::sim::refuseUnsafeCall())
    return refused;
  if (!pointer)
    return cudaSuccess;
  auto &device = memory();
  const auto allocation = device.live.find(reinterpret_cast<uintptr_t>(pointer));
  if (allocation == device.live.end())
    return bertc::sim::recordResult(cudaErrorInvalidDevicePointer);
  device.used -= allocation->second.second;
  device.live.erase(allocation);
  std::free(pointer);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  if (cudaError_t sticky = bertc::sim::stickyError())
    return sticky;
  if (!freeBytes || !totalBytes)
    return bertc::sim::recordResult(cudaErrorInvalidValue);
  *totalBytes = memory().capacity;
  *freeBytes = memory().capacity - memory().used;
  return cudaSuccess;
}
