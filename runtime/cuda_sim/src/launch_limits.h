// CUDA's launch limits for compute capability 7.5 to 9.0 (the CUDA programming guide's
// "technical specifications" table), which the simulated device enforces, and the oldest
// architecture the kernels are built for.
#pragma once

#include <cstddef>

namespace bertc::sim {

constexpr int kWarpSize = 32;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxBlockDimZ = 64;
constexpr int kMaxGridDimX = 2147483647;
constexpr int kMaxGridDimYZ = 65535;
constexpr size_t kMaxSharedBytesPerBlock = 48 * 1024; // static shared memory
/// The runtime's kernels are built for sm_75 and newer (CMAKE_CUDA_ARCHITECTURES): an
/// older device has no image of them to launch.
constexpr int kOldestKernelArch = 75;

} // namespace bertc::sim
