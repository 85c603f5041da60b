// Plan-check mode: shadow ownership of the arena (see plan_check.h).

#include "bertc/runtime/plan_check.h"

#include <cstring>

namespace bertc {

namespace {
constexpr size_t kGranuleBytes = 2; // the smallest element (bf16/fp16)
} // namespace

PlanChecker::PlanChecker(const std::byte *arena, size_t arenaBytes)
    : arena(arena), owners((arenaBytes + kGranuleBytes - 1) / kGranuleBytes, kNobody) {}

size_t PlanChecker::granule(const void *data) const {
  return size_t(static_cast<const std::byte *>(data) - arena) / kGranuleBytes;
}

void PlanChecker::define(const void *data, size_t bytes, int32_t tensor, const char *name) {
  if (size_t(tensor) >= names.size())
    names.resize(size_t(tensor) + 1, "");
  names[size_t(tensor)] = name;
  size_t first = granule(data);
  std::fill_n(owners.begin() + first, bytes / kGranuleBytes, tensor);
}

void PlanChecker::release(void *data, size_t bytes, int32_t tensor) {
  size_t first = granule(data);
  auto *bytesOut = static_cast<std::byte *>(data);
  for (size_t g = first; g < first + bytes / kGranuleBytes; ++g) {
    if (owners[g] != tensor)
      continue; // another tensor's bytes: its own reads will tell
    owners[g] = kNobody;
    std::memset(bytesOut + (g - first) * kGranuleBytes, 0xFF, kGranuleBytes);
  }
}

void PlanChecker::read(const void *data, size_t bytes, int32_t tensor, const char *op,
                       const char *what) const {
  size_t first = granule(data);
  for (size_t g = first; g < first + bytes / kGranuleBytes; ++g) {
    if (owners[g] == tensor)
      continue;
    size_t offset = g * kGranuleBytes;
    std::string holder = owners[g] == kNobody
                             ? std::string("dead bytes")
                             : "bytes now owned by tensor " + std::string(names[size_t(owners[g])]);
    throw PlanCheckError("plan check: " + std::string(op) + " reads " + what +
                         ", but arena offset " + std::to_string(offset) + " holds " + holder);
  }
}

} // namespace bertc
