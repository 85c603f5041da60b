// The simulated device's identity: one GPU with CUDA's per-block limits, of the
// architecture BERTC_SIM_ARCH names (sm_50 to sm_90) when set, otherwise of the --arch of
// a trainer that bertc built for the cuda-sim target (it defines
// bertc_sim_compute_capability), and sm_80 for other programs (the kernel tests). Below
// kOldestKernelArch it is a GPU the kernels were not built for: it launches none. Its
// kernels' image is compiled for its own architecture, or for the older one
// BERTC_SIM_PTX_ARCH names: a build without the device's architecture, whose PTX for an
// older one the driver compiles (cudaFuncGetAttributes' ptxVersion says which).
#include "device_memory_state.h"
#include "launch_limits.h"
#include "runtime_errors.h"

#include "bertc/cuda_sim/device_memory.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

// Defined by a trainer built for the cuda-sim target; a weak reference, null elsewhere.
extern "C" __attribute__((weak)) const int bertc_sim_compute_capability;

namespace bertc::sim {

namespace {
/// The architecture the environment variable `name` names ("sm_86": 86), `fallback` when it
/// is unset; anything but sm_50 to sm_`newest` ends the program with a message.
int archFromEnvironment(const char *name, int fallback, int newest) {
  const char *arch = std::getenv(name);
  int capability = 0;
  if (!arch)
    return fallback;
  if (std::sscanf(arch, "sm_%d", &capability) != 1 || capability < 50 || capability > newest) {
    std::fprintf(stderr, "bertc simulated device: %s=%s is not one of sm_50 to sm_%d\n", name, arch,
                 newest);
    std::exit(2);
  }
  return capability;
}

/// The architecture the kernels' image was compiled for: BERTC_SIM_PTX_ARCH (sm_50 up to
/// the device's) when set, else the device's.
int imageArch() {
  const int device = computeCapability();
  return archFromEnvironment("BERTC_SIM_PTX_ARCH", device, device);
}
} // namespace

int computeCapability() {
  return archFromEnvironment("BERTC_SIM_ARCH",
                             &bertc_sim_compute_capability ? bertc_sim_compute_capability : 80, 90);
}

} // namespace bertc::sim

using namespace bertc::sim;

cudaError_t cudaGetDeviceCount(int *count) {
  if (!count)
    return recordResult(cudaErrorInvalidValue);
  *count = 1;
  return stickyError();
}

cudaError_t cudaGetDevice(int *device) {
  if (!device)
    return recordResult(cudaErrorInvalidValue);
  *device = 0;
  return stickyError();
}

cudaError_t cudaSetDevice(int device) {
  return device == 0 ? stickyError() : recordResult(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *properties, int device) {
  if (!properties)
    return recordResult(cudaErrorInvalidValue);
  if (device != 0)
    return recordResult(cudaErrorInvalidDevice);
  std::memset(properties, 0, sizeof *properties);
  const int capability = computeCapability();
  std::snprintf(properties->name, sizeof properties->name, "bertc simulated sm_%d device",
                capability);
  properties->totalGlobalMem = deviceCapacity();
  properties->sharedMemPerBlock = kMaxSharedBytesPerBlock;
  properties->warpSize = kWarpSize;
  properties->maxThreadsPerBlock = kMaxThreadsPerBlock;
  properties->maxThreadsDim[0] = properties->maxThreadsDim[1] = kMaxThreadsPerBlock;
  properties->maxThreadsDim[2] = kMaxBlockDimZ;
  properties->maxGridSize[0] = kMaxGridDimX;
  properties->maxGridSize[1] = properties->maxGridSize[2] = kMaxGridDimYZ;
  properties->major = capability / 10;
  properties->minor = capability % 10;
  properties->multiProcessorCount = 1;
  return stickyError();
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attributes, const void *function) {
  if (!attributes)
    return recordResult(cudaErrorInvalidValue);
  if (!function)
    return recordResult(cudaErrorInvalidDeviceFunction);
  if (computeCapability() < kOldestKernelArch)
    return recordResult(cudaErrorNoKernelImageForDevice);
  *attributes = {};
  attributes->maxThreadsPerBlock = kMaxThreadsPerBlock;
  attributes->ptxVersion = imageArch();
  attributes->binaryVersion = computeCapability();
  return stickyError();
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attribute, int device) {
  if (!value)
    return recordResult(cudaErrorInvalidValue);
  if (device != 0)
    return recordResult(cudaErrorInvalidDevice);
  switch (attribute) {
  case cudaDevAttrMaxThreadsPerBlock:
    *value = kMaxThreadsPerBlock;
    break;
  case cudaDevAttrMaxSharedMemoryPerBlock:
    *value = int(kMaxSharedBytesPerBlock);
    break;
  case cudaDevAttrWarpSize:
    *value = kWarpSize;
    break;
  case cudaDevAttrMultiProcessorCount:
    *value = 1;
    break;
  case cudaDevAttrComputeCapabilityMajor:
    *value = computeCapability() / 10;
    break;
  case cudaDevAttrComputeCapabilityMinor:
    *value = computeCapability() % 10;
    break;
  default:
    return recordResult(cudaErrorInvalidValue);
  }
  return stickyError();
}
