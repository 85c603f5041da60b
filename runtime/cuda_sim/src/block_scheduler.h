// Runs the threads of one block of a launch as fibers, with CUDA's semantics for the
// block-wide barrier and the warp-wide collectives (device_code.h).
#pragma once

#include "bertc/cuda_sim/device_code.h"
#include "bertc/cuda_sim/launch.h"

#include <string>

namespace bertc::sim {

/// Runs every thread of block `block` to its end. On a deadlock or a misused collective
/// it raises a device fault naming the kernel, block and thread, and returns false.
bool runBlock(const LaunchConfig &config, uint3 block, void (*threadBody)(const void *),
              const void *context);

/// Stops the running thread for good (its block is abandoned) with a device fault naming
/// the kernel, block and thread, followed by `problem`. Only valid inside a kernel.
[[noreturn]] void stopRunningThread(const std::string &problem);

} // namespace bertc::sim
