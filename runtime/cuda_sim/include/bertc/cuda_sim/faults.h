// Faults of the simulated device: what a real GPU reports as a sticky error after a kernel
// (or a library's kernel) did something illegal, and compute-sanitizer names.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace bertc::sim {

/// Records a fault as a real device raises it: `report` (naming the kernel, block, thread
/// and address where it has them) goes to stderr and to faultReports(), and every later
/// runtime call returns `error`, as after a real kernel fault.
void raiseDeviceFault(cudaError_t error, const std::string &report);

/// The reports raised so far, oldest first.
const std::vector<std::string> &faultReports();

/// Forgets the reports and the sticky error: tests that break a kernel on purpose call it
/// after checking what was caught.
void clearDeviceFaults();

} // namespace bertc::sim
