// The simulated device's events: what runs is complete when queued, so a recorded event is
// complete and waits on it return; bad handles and flags fail with CUDA's error codes; the
// time between two timing events is the host's time between their records.
#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <chrono>
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

TEST(Events, ElapsedTimeIsTheHostTimeBetweenRecords) {
  cudaEvent_t start = nullptr, end = nullptr, untimed = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&start, cudaEventDefault), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&end, cudaEventDefault), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
  float milliseconds = -1.0f;
  // Not recorded yet.
  EXPECT_EQ(cudaEventElapsedTime(&milliseconds, start, end), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventRecord(start, nullptr), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(cudaEventRecord(end, nullptr), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(untimed, nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&milliseconds, start, end), cudaSuccess);
  EXPECT_GE(milliseconds, 20.0f);
  EXPECT_EQ(cudaEventElapsedTime(&milliseconds, start, untimed), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventElapsedTime(nullptr, start, end), cudaErrorInvalidValue);
  cudaGetLastError();
  for (cudaEvent_t event : {start, end, untimed})
    EXPECT_EQ(cudaEventDestroy(event), cudaSuccess);
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
