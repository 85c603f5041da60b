// The check a CUDA trainer makes before it allocates anything: can this GPU run its steps?
// The runtime's kernels are built for sm_75 and newer, and cuBLASLt has bf16 and TF32 GEMMs
// from sm_80 only, so an older GPU would otherwise stop the run at its first launch or GEMM
// in CUDA's or cuBLASLt's words; this names the GPU, what it lacks and what to build instead.
#pragma once

#include "bertc/abi/trainer.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace bertc::cuda {

/// The GPU cannot run the trainer's steps; what() names it and what to build instead.
struct DeviceArchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A GPU as the check sees it.
struct DeviceArch {
  std::string name;
  int32_t capability; ///< compute capability x 10 (8.6: 86)
};

/// The current device (checked: throws CudaError when there is no usable device).
DeviceArch deviceArch();

/// Why `device` cannot run steps that need `math` (CudaSteps::newerGpuMath); empty when it
/// can.
std::string deviceArchShortfall(const DeviceArch &device, NewerGpuMath math);

/// Throws DeviceArchError with deviceArchShortfall's message for the current device.
void requireDeviceArch(NewerGpuMath math);

} // namespace bertc::cuda
