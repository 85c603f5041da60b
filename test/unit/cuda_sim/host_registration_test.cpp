// The simulated device's page-locked host memory (cudaHostRegister): ranges are kept,
// so that what CUDA refuses is refused here too, with CUDA's error codes.
#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(HostRegistration, ARangeIsRegisteredOnceAndUnregisteredOnce) {
  std::vector<float> host(1024);
  ASSERT_EQ(cudaHostRegister(host.data(), 4096, cudaHostRegisterDefault), cudaSuccess);
  // The same range, or one that overlaps it from either side, is already registered.
  EXPECT_EQ(cudaHostRegister(host.data(), 4096, cudaHostRegisterDefault),
            cudaErrorHostMemoryAlreadyRegistered);
  EXPECT_EQ(cudaHostRegister(host.data() + 512, 1024, cudaHostRegisterDefault),
            cudaErrorHostMemoryAlreadyRegistered);
  EXPECT_EQ(cudaGetLastError(), cudaErrorHostMemoryAlreadyRegistered);
  ASSERT_EQ(cudaHostUnregister(host.data()), cudaSuccess);
  EXPECT_EQ(cudaHostUnregister(host.data()), cudaErrorHostMemoryNotRegistered);
  EXPECT_EQ(cudaGetLastError(), cudaErrorHostMemoryNotRegistered);
  // Two neighbouring ranges do not overlap.
  EXPECT_EQ(cudaHostRegister(host.data(), 2048, cudaHostRegisterDefault), cudaSuccess);
  EXPECT_EQ(cudaHostRegister(host.data() + 512, 2048, cudaHostRegisterDefault), cudaSuccess);
  EXPECT_EQ(cudaHostUnregister(host.data()), cudaSuccess);
  EXPECT_EQ(cudaHostUnregister(host.data() + 512), cudaSuccess);
}

TEST(HostRegistration, DeviceMemoryAnEmptyRangeAndUnknownFlagsAreInvalid) {
  void *device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 256), cudaSuccess);
  EXPECT_EQ(cudaHostRegister(device, 256, cudaHostRegisterDefault), cudaErrorInvalidValue);
  std::vector<float> host(16);
  EXPECT_EQ(cudaHostRegister(host.data(), 0, cudaHostRegisterDefault), cudaErrorInvalidValue);
  EXPECT_EQ(cudaHostRegister(host.data(), 64, 0x40u), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
}

} // namespace
