// The CUDA error check and the start-up checks of the device's memory and architecture. The
// message formats need no device; the checks against a real device run where there is one.
#include "cuda_test_support.h"

#include "bertc/abi/trainer.h"
#include "bertc/runtime/cuda_device_arch.h"
#include "bertc/runtime/cuda_memory.h"

namespace bertc::cuda::test {
namespace {

TEST(CudaCheckTest, FailureNamesTheCallTheLocationAndTheError) {
  try {
    BERTC_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const CudaError &error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("device_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaErrorInvalidValue failed: cudaErrorInvalidValue"), std::string::npos)
        << what;
  }
  EXPECT_NO_THROW(BERTC_CUDA_CHECK(cudaSuccess));
}

TEST(CudaCheckTest, CublasFailureNamesTheStatus) {
  try {
    BERTC_CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED);
    FAIL() << "no exception";
  } catch (const CudaError &error) {
    EXPECT_NE(std::string(error.what()).find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos)
        << error.what();
  }
}

TEST(DeviceMemoryTest, ShortfallNamesBothNumbers) {
  const DeviceMemory device{size_t(5) << 30, size_t(8) << 30};
  EXPECT_EQ(deviceMemoryShortfall(size_t(4) << 30, device), "");
  const std::string message = deviceMemoryShortfall(size_t(6) << 30, device);
  EXPECT_NE(message.find("6442450944 bytes (6.00 GiB)"), std::string::npos) << message;
  EXPECT_NE(message.find("5368709120 bytes (5.00 GiB) free"), std::string::npos) << message;
}

TEST(DeviceArchTest, AGpuOlderThanTheKernelsIsSentToTheCpuTarget) {
  const DeviceArch pascal{"Tesla P100-PCIE-16GB", 60};
  for (NewerGpuMath math : {NewerGpuMath::None, NewerGpuMath::Bf16, NewerGpuMath::Tf32}) {
    const std::string message = deviceArchShortfall(pascal, math);
    EXPECT_NE(message.find("Tesla P100-PCIE-16GB (compute capability 6.0) is older than"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("compute capability 7.5 (sm_75) and newer"), std::string::npos)
        << message;
    EXPECT_NE(message.find("bertc --target cpu"), std::string::npos) << message;
  }
  // Volta: older than the kernels too.
  EXPECT_NE(deviceArchShortfall({"Tesla V100", 70}, NewerGpuMath::None), "");
}

TEST(DeviceArchTest, Bf16OrTf32OnATuringGpuNamesWhatToRebuildWith) {
  const DeviceArch turing{"Tesla T4", 75};
  EXPECT_EQ(deviceArchShortfall(turing, NewerGpuMath::None), "");
  EXPECT_EQ(deviceArchShortfall(turing, NewerGpuMath::Bf16),
            "this trainer's GEMMs take bf16, which cuBLASLt runs from compute capability 8.0 "
            "(sm_80); Tesla T4 (compute capability 7.5) is older: rebuild it with bertc --arch "
            "sm_75 --precision fp16 (fp16 with loss scaling)");
  const std::string tf32 = deviceArchShortfall(turing, NewerGpuMath::Tf32);
  EXPECT_NE(tf32.find("take TF32 (bertc --tf32)"), std::string::npos) << tf32;
  EXPECT_NE(tf32.find("rebuild it without --tf32"), std::string::npos) << tf32;
}

TEST(DeviceArchTest, NewerGpusRunEveryTrainer) {
  for (int32_t capability : {80, 86, 89, 90, 100, 120})
    for (NewerGpuMath math : {NewerGpuMath::None, NewerGpuMath::Bf16, NewerGpuMath::Tf32})
      EXPECT_EQ(deviceArchShortfall({"gpu", capability}, math), "") << capability;
}

class DeviceMemoryOnDeviceTest : public CudaTest {};

class DeviceArchOnDeviceTest : public CudaTest {};

TEST_F(DeviceArchOnDeviceTest, TheTestGpuRunsTheKernels) {
  const DeviceArch device = deviceArch();
  EXPECT_FALSE(device.name.empty());
  EXPECT_GE(device.capability, kOldestCudaArch);
  EXPECT_NO_THROW(requireDeviceArch(NewerGpuMath::None));
  EXPECT_EQ(deviceArchShortfall(device, NewerGpuMath::Bf16).empty(),
            device.capability >= kBf16Tf32CudaArch);
#if defined(BERTC_CUDA_SIM)
  ScopedArch turing("sm_75");
  EXPECT_NO_THROW(requireDeviceArch(NewerGpuMath::None));
  EXPECT_THROW(requireDeviceArch(NewerGpuMath::Bf16), DeviceArchError);
#endif
}

TEST_F(DeviceMemoryOnDeviceTest, RefusesAPlanLargerThanTheDevice) {
  const DeviceMemory device = deviceMemory();
  EXPECT_GT(device.totalBytes, 0u);
  EXPECT_NO_THROW(requireDeviceMemory(1));
  EXPECT_THROW(requireDeviceMemory(device.totalBytes + 1), DeviceMemoryError);
}

} // namespace
} // namespace bertc::cuda::test
