// The CUDA error check and the start-up memory check. The message formats need no device;
// the checks against a real device run where there is one.
#include "cuda_test_support.h"

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

class DeviceMemoryOnDeviceTest : public CudaTest {};

TEST_F(DeviceMemoryOnDeviceTest, RefusesAPlanLargerThanTheDevice) {
  const DeviceMemory device = deviceMemory();
  EXPECT_GT(device.totalBytes, 0u);
  EXPECT_NO_THROW(requireDeviceMemory(1));
  EXPECT_THROW(requireDeviceMemory(device.totalBytes + 1), DeviceMemoryError);
}

} // namespace
} // namespace bertc::cuda::test
