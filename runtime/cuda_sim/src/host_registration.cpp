// Page-locked host memory (cudaHostRegister): the simulated device keeps the registered
// ranges, so that a runner that registers a range twice, registers device memory or
// unregisters what it never registered fails here as it would on a GPU.
#include "runtime_errors.h"

#include "bertc/cuda_sim/device_memory.h"

#include <cstdint>
#include <iterator>
#include <map>

namespace {

/// Registered ranges: start address to byte count.
std::map<std::uintptr_t, size_t> &registeredRanges() {
  static std::map<std::uintptr_t, size_t> ranges;
  return ranges;
}

/// Whether [begin, begin + bytes) overlaps a registered range.
bool overlapsRegistered(std::uintptr_t begin, size_t bytes) {
  auto &ranges = registeredRanges();
  auto next = ranges.lower_bound(begin);
  if (next != ranges.end() && next->first < begin + bytes)
    return true;
  if (next == ranges.begin())
    return false;
  auto previous = std::prev(next);
  return previous->first + previous->second > begin;
}

} // namespace

namespace bertc::sim {

bool isRegisteredHostRange(const void *pointer, size_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(pointer);
  auto &ranges = registeredRanges();
  auto next = ranges.upper_bound(begin);
  if (next == ranges.begin())
    return false;
  auto holder = std::prev(next);
  return begin + bytes <= holder->first + holder->second;
}

} // namespace bertc::sim

using namespace bertc::sim;

cudaError_t cudaHostRegister(void *pointer, size_t bytes, unsigned flags) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!pointer || bytes == 0 || flags != cudaHostRegisterDefault || isDeviceRange(pointer, bytes))
    return recordResult(cudaErrorInvalidValue);
  auto begin = reinterpret_cast<std::uintptr_t>(pointer);
  if (overlapsRegistered(begin, bytes))
    return recordResult(cudaErrorHostMemoryAlreadyRegistered);
  registeredRanges()[begin] = bytes;
  return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *pointer) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!registeredRanges().erase(reinterpret_cast<std::uintptr_t>(pointer)))
    return recordResult(cudaErrorHostMemoryNotRegistered);
  return cudaSuccess;
}
