// Page-locked host memory (cudaHostRegister): the simulated device keeps the registered
// ranges, so that a runner that registers a range twice, registers device memory or
// unregisters what it never registered fails here as it would on a GPU. A range registered
// mapped is one kernels may access (the access checks ask isMappedHostRange).
#include "runtime_errors.h"

#include "bertc/cuda_sim/device_memory.h"

#include <cstdint>
#include <iterator>
#include <map>

namespace {

struct Registration {
  size_t bytes;
  bool mapped; ///< cudaHostRegisterMapped
};

/// Registered ranges by start address.
std::map<std::uintptr_t, Registration> &registeredRanges() {
  static std::map<std::uintptr_t, Registration> ranges;
  return ranges;
}

/// The registration holding [begin, begin + bytes) whole, if any.
const Registration *registrationHolding(const void *pointer, size_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(pointer);
  auto &ranges = registeredRanges();
  auto next = ranges.upper_bound(begin);
  if (next == ranges.begin())
    return nullptr;
  auto holder = std::prev(next);
  return begin + bytes <= holder->first + holder->second.bytes ? &holder->second : nullptr;
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
  return previous->first + previous->second.bytes > begin;
}

} // namespace

namespace bertc::sim {

bool isRegisteredHostRange(const void *pointer, size_t bytes) {
  return registrationHolding(pointer, bytes) != nullptr;
}

bool isMappedHostRange(const void *pointer, size_t bytes) {
  const Registration *holder = registrationHolding(pointer, bytes);
  return holder && holder->mapped;
}

} // namespace bertc::sim

using namespace bertc::sim;

cudaError_t cudaHostRegister(void *pointer, size_t bytes, unsigned flags) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  bool knownFlags = flags == cudaHostRegisterDefault || flags == cudaHostRegisterMapped;
  if (!pointer || bytes == 0 || !knownFlags || isDeviceRange(pointer, bytes))
    return recordResult(cudaErrorInvalidValue);
  auto begin = reinterpret_cast<std::uintptr_t>(pointer);
  if (overlapsRegistered(begin, bytes))
    return recordResult(cudaErrorHostMemoryAlreadyRegistered);
  registeredRanges()[begin] = {bytes, flags == cudaHostRegisterMapped};
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **device, void *host, unsigned flags) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!device || flags != 0 || !isMappedHostRange(host, 1))
    return recordResult(cudaErrorInvalidValue);
  *device = host;
  return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *pointer) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!registeredRanges().erase(reinterpret_cast<std::uintptr_t>(pointer)))
    return recordResult(cudaErrorHostMemoryNotRegistered);
  return cudaSuccess;
}
