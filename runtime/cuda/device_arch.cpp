// The start-up check that the GPU can run the trainer's steps (cuda_device_arch.h).
#include "bertc/runtime/cuda_device_arch.h"

#include "bertc/runtime/cuda_check.h"

namespace bertc::cuda {

namespace {
/// "8.6" for 86.
std::string capabilityText(int32_t capability) {
  return std::to_string(capability / 10) + "." + std::to_string(capability % 10);
}
} // namespace

DeviceArch deviceArch() {
  int device = 0;
  BERTC_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  BERTC_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return {properties.name, properties.major * 10 + properties.minor};
}

std::string deviceArchShortfall(const DeviceArch &device, NewerGpuMath math) {
  const std::string gpu =
      device.name + " (compute capability " + capabilityText(device.capability) + ")";
  if (device.capability < kOldestCudaArch)
    return gpu +
           " is older than any GPU bertc's CUDA trainers run on: their kernels are built "
           "for compute capability " +
           capabilityText(kOldestCudaArch) + " (sm_" + std::to_string(kOldestCudaArch) +
           ") and newer; build a CPU trainer with bertc --target cpu";
  if (math == NewerGpuMath::None || device.capability >= kBf16Tf32CudaArch)
    return {};
  const bool bf16 = math == NewerGpuMath::Bf16;
  return std::string("this trainer's GEMMs take ") + (bf16 ? "bf16" : "TF32 (bertc --tf32)") +
         ", which cuBLASLt runs from compute capability " + capabilityText(kBf16Tf32CudaArch) +
         " (sm_" + std::to_string(kBf16Tf32CudaArch) + "); " + gpu + " is older: rebuild it " +
         (bf16 ? "with bertc --arch sm_" + std::to_string(device.capability) +
                     " --precision fp16 (fp16 with loss scaling)"
               : std::string("without --tf32"));
}

void requireDeviceArch(NewerGpuMath math) {
  const std::string shortfall = deviceArchShortfall(deviceArch(), math);
  if (!shortfall.empty())
    throw DeviceArchError(shortfall);
}

} // namespace bertc::cuda
