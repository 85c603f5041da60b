// The simulated device's launch checks: a configuration past CUDA's limits, and a device
// older than the kernels' oldest architecture (which has no image of them), launch nothing
// and fail with CUDA's error codes; the same kernel on a supported device runs, compiled
// (cudaFuncGetAttributes says) for the device's own architecture.
#include "scoped_arch.h"

#include "bertc/abi/trainer.h"
#include "bertc/cuda_sim/launch.h"

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace bertc::sim::test {
namespace {

/// out[i] = i for the block's threads.
__global__ void writeIndices(int *out) { out[threadIdx.x] = int(threadIdx.x); }

/// Launches writeIndices over `threads` threads into a fresh buffer of 4 ints set to -1;
/// returns cudaGetLastError after the launch and the buffer's values.
std::pair<cudaError_t, std::vector<int>> launchWriteIndices(unsigned threads) {
  int *out = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&out), 4 * sizeof(int)), cudaSuccess);
  std::vector<int> values(4, -1);
  EXPECT_EQ(cudaMemcpy(out, values.data(), 4 * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  launchKernel({"writeIndices", dim3(1), dim3(threads), 0, nullptr}, writeIndices, out);
  const cudaError_t launched = cudaGetLastError();
  EXPECT_EQ(cudaMemcpy(values.data(), out, 4 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaFree(out), cudaSuccess);
  return {launched, values};
}

TEST(Launch, ASupportedDeviceRunsTheKernel) {
  for (const char *arch : {"sm_75", "sm_90"}) {
    ScopedArch device(arch);
    auto [launched, values] = launchWriteIndices(4);
    EXPECT_EQ(launched, cudaSuccess) << arch;
    EXPECT_EQ(values, (std::vector<int>{0, 1, 2, 3})) << arch;
  }
}

TEST(Launch, ADeviceOlderThanTheKernelsHasNoImageToLaunch) {
  // The oldest architecture a trainer's runner accepts (bertc/abi/trainer.h) is the oldest
  // the simulated device launches on.
  const std::string oldest = "sm_" + std::to_string(kOldestCudaArch);
  const std::string older = "sm_" + std::to_string(kOldestCudaArch - 1);
  {
    ScopedArch device(oldest.c_str());
    EXPECT_EQ(launchWriteIndices(4).first, cudaSuccess);
  }
  for (const char *arch : {older.c_str(), "sm_60", "sm_70"}) {
    ScopedArch device(arch);
    auto [launched, values] = launchWriteIndices(4);
    EXPECT_EQ(launched, cudaErrorNoKernelImageForDevice) << arch;
    EXPECT_STREQ(cudaGetErrorString(launched),
                 "no kernel image is available for execution on the device");
    EXPECT_EQ(values, std::vector<int>(4, -1)) << arch;
    // Not sticky: the device goes on working.
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

TEST(Launch, AKernelIsCompiledForTheDevicesArchitecture) {
  for (auto [arch, capability] : {std::pair{"sm_75", 75}, {"sm_86", 86}, {"sm_90", 90}}) {
    ScopedArch device(arch);
    cudaFuncAttributes attributes{};
    ASSERT_EQ(cudaFuncGetAttributes(&attributes, writeIndices), cudaSuccess) << arch;
    EXPECT_EQ(attributes.ptxVersion, capability) << arch;
    EXPECT_EQ(attributes.binaryVersion, capability) << arch;
    EXPECT_EQ(attributes.maxThreadsPerBlock, 1024) << arch;
  }
  ScopedArch pascal("sm_60");
  cudaFuncAttributes attributes{};
  EXPECT_EQ(cudaFuncGetAttributes(&attributes, writeIndices), cudaErrorNoKernelImageForDevice);
  EXPECT_EQ(cudaFuncGetAttributes(&attributes, static_cast<const void *>(nullptr)),
            cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(Launch, AConfigurationPastCudasLimitsLaunchesNothing) {
  auto [launched, values] = launchWriteIndices(2048);
  EXPECT_EQ(launched, cudaErrorInvalidConfiguration);
  EXPECT_EQ(values, std::vector<int>(4, -1));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

} // namespace
} // namespace bertc::sim::test
