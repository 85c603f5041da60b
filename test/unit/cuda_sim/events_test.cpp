// The simulated device's events: what runs is complete when queued, so a recorded event is
// complete and waits on it return; bad handles and flags fail with CUDA's error codes.
#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <thread>

namespace {

TEST(Events, ARecordedEventIsCompleteForTheHostAndForStreams) {
  cudaStream_t stream = nullptr, copies = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&copies, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t event = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(event, stream), cudaSuccess);
  EXPECT_EQ(cudaStreamWaitEvent(copies, event, 0), cudaSuccess);
  // Another host thread may wait on it, as a trainer's worker does.
  cudaError_t waited = cudaErrorInvalidValue;
  std::thread([&] { waited = cudaEventSynchronize(event); }).join();
  EXPECT_EQ(waited, cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(event), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(copies), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(Events, BadHandlesAndFlagsFail) {
  cudaEvent_t event = nullptr;
  EXPECT_EQ(cudaEventCreateWithFlags(&event, 0x80u), cudaErrorInvalidValue);
  ASSERT_EQ(cudaEventCreateWithFlags(&event, cudaEventDefault), cudaSuccess);
  EXPECT_EQ(cudaStreamWaitEvent(nullptr, event, 1u), cudaErrorInvalidValue);
  EXPECT_EQ(cudaEventDestroy(event), cudaSuccess);
  // Destroyed: no longer a handle.
  EXPECT_EQ(cudaEventRecord(event, nullptr), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventDestroy(event), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
}

} // namespace
