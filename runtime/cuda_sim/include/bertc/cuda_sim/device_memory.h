// The simulated device's memory and identity, for the simulated libraries (cuBLASLt) and
// the checkers: which host addresses are device memory, and which GPU is simulated.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bertc::sim {

/// True when [pointer, pointer + bytes) lies inside one live cudaMalloc allocation.
bool isDeviceRange(const void *pointer, size_t bytes);

/// True when [pointer, pointer + bytes) lies inside one cudaHostRegister'ed range
/// (page-locked host memory, which a captured copy may use).
bool isRegisteredHostRange(const void *pointer, size_t bytes);

/// True when [pointer, pointer + bytes) lies inside one range registered with
/// cudaHostRegisterMapped, which kernels may access in place.
bool isMappedHostRange(const void *pointer, size_t bytes);

/// The live cudaMalloc allocation holding `pointer` as [begin, end) (the bytes asked for),
/// or an empty range when there is none.
struct DeviceRange {
  uintptr_t begin = 0, end = 0;
};
DeviceRange deviceAllocationAt(const void *pointer);

/// The simulated GPU's compute capability as major * 10 + minor (80 for sm_80): the
/// trainer's --arch, or BERTC_SIM_ARCH (e.g. "sm_75") when set; sm_80 by default.
/// Kernels launch only from sm_75 on, the oldest architecture they are built for.
int computeCapability();

} // namespace bertc::sim
