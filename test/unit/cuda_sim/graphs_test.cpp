// The simulated device's stream capture and graphs: a captured graph runs nothing until
// launched and then replays what was queued; an update with the same nodes takes the new
// kernel arguments, one with other nodes is refused as CUDA refuses it; what a capture may
// not hold (synchronising, pageable copies, unsafe calls) fails with CUDA's error codes and
// invalidates the capture.
#include "bertc/cuda_sim/launch.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace bertc::sim::test {
namespace {

constexpr int kCount = 64;

/// values[i] = values[i] * factor + offset.
__global__ void scaleAndShift(float *values, float factor, float offset) {
  const int i = int(threadIdx.x);
  values[i] = values[i] * factor + offset;
}

/// A device buffer of kCount floats and a non-blocking stream, freed at the end.
class Graphs : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&values_), kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    EXPECT_EQ(cudaFree(values_), cudaSuccess);
  }

  /// Captures: values = 0, then values = values * factor + offset.
  cudaGraph_t captureFill(float factor, float offset) {
    EXPECT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    EXPECT_EQ(cudaMemsetAsync(values_, 0, kCount * sizeof(float), stream_), cudaSuccess);
    launchKernel(
        {"scaleAndShift", 1, kCount, 0, stream_},
        [](auto... arguments) { scaleAndShift(arguments...); }, values_, factor, offset);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    cudaGraph_t graph = nullptr;
    EXPECT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
    return graph;
  }

  std::vector<float> download() {
    std::vector<float> host(kCount);
    EXPECT_EQ(cudaMemcpy(host.data(), values_, kCount * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }

  float *values_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

TEST_F(Graphs, AGraphRunsWhatWasCapturedOnlyWhenLaunched) {
  ASSERT_EQ(cudaMemset(values_, 0, kCount * sizeof(float)), cudaSuccess);
  cudaGraph_t graph = captureFill(1.0f, 3.0f);
  EXPECT_EQ(download()[0], 0.0f); // captured, not run
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  ASSERT_EQ(nodes, 2u);
  cudaGraphNode_t handles[2];
  ASSERT_EQ(cudaGraphGetNodes(graph, handles, &nodes), cudaSuccess);
  cudaGraphNodeType types[2];
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(cudaGraphNodeGetType(handles[i], &types[i]), cudaSuccess);
  EXPECT_EQ(types[0], cudaGraphNodeTypeMemset);
  EXPECT_EQ(types[1], cudaGraphNodeTypeKernel);

  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(download(), std::vector<float>(kCount, 3.0f));
  // A replay runs the memset again, so the result does not accumulate.
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  EXPECT_EQ(download(), std::vector<float>(kCount, 3.0f));
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

TEST_F(Graphs, AnUpdateWithTheSameNodesTakesTheNewArguments) {
  cudaGraph_t first = captureFill(1.0f, 3.0f), second = captureFill(1.0f, 5.0f);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, first, 0), cudaSuccess);
  cudaGraphExecUpdateResultInfo info{};
  ASSERT_EQ(cudaGraphExecUpdate(exec, second, &info), cudaSuccess);
  EXPECT_EQ(info.result, cudaGraphExecUpdateSuccess);
  // The graph it was updated from may go; the executable graph keeps its own nodes.
  EXPECT_EQ(cudaGraphDestroy(second), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  EXPECT_EQ(download(), std::vector<float>(kCount, 5.0f));
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(first), cudaSuccess);
}

TEST_F(Graphs, AnUpdateWithOtherNodesIsRefusedAndChangesNothing) {
  cudaGraph_t graph = captureFill(1.0f, 3.0f);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

  // One node more: a topology change.
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(values_, 0, sizeof(float), stream_), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(values_, 0, sizeof(float), stream_), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(values_, 0, sizeof(float), stream_), cudaSuccess);
  cudaGraph_t longer = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream_, &longer), cudaSuccess);
  cudaGraphExecUpdateResultInfo info{};
  EXPECT_EQ(cudaGraphExecUpdate(exec, longer, &info), cudaErrorGraphExecUpdateFailure);
  EXPECT_EQ(info.result, cudaGraphExecUpdateErrorTopologyChanged);
  EXPECT_EQ(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);

  // As many nodes, the second a copy where the kernel was: a node type change.
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(values_, 0, sizeof(float), stream_), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(values_, values_ + 1, sizeof(float), cudaMemcpyDeviceToDevice, stream_),
            cudaSuccess);
  cudaGraph_t retyped = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream_, &retyped), cudaSuccess);
  EXPECT_EQ(cudaGraphExecUpdate(exec, retyped, &info), cudaErrorGraphExecUpdateFailure);
  EXPECT_EQ(info.result, cudaGraphExecUpdateErrorNodeTypeChanged);
  EXPECT_NE(info.errorNode, nullptr);
  (void)cudaGetLastError();

  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  EXPECT_EQ(download(), std::vector<float>(kCount, 3.0f));
  for (cudaGraph_t each : {graph, longer, retyped})
    EXPECT_EQ(cudaGraphDestroy(each), cudaSuccess);
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
}

/// Begins a capture, makes `call`, checks its result and that the capture ends invalidated.
template <typename Call>
void expectInvalidates(cudaStream_t stream, cudaStreamCaptureMode mode, Call call,
                       cudaError_t expected) {
  ASSERT_EQ(cudaStreamBeginCapture(stream, mode), cudaSuccess);
  EXPECT_EQ(call(), expected);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EXPECT_EQ(cudaStreamIsCapturing(stream, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusInvalidated);
  cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(0x1);
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(cudaStreamIsCapturing(stream, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  (void)cudaGetLastError();
}

TEST_F(Graphs, WhatACaptureCannotHoldFailsAndInvalidatesIt) {
  float *other = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&other), sizeof(float)), cudaSuccess);
  std::vector<float> pageable(kCount);
  const size_t bytes = kCount * sizeof(float);
  const auto mode = cudaStreamCaptureModeThreadLocal;
  expectInvalidates(
      stream_, mode, [&] { return cudaStreamSynchronize(stream_); },
      cudaErrorStreamCaptureUnsupported);
  expectInvalidates(
      stream_, mode,
      [&] {
        return cudaMemcpyAsync(pageable.data(), values_, bytes, cudaMemcpyDeviceToHost, stream_);
      },
      cudaErrorStreamCaptureUnsupported);
  expectInvalidates(
      stream_, mode,
      [&] { return cudaMemcpy(pageable.data(), values_, bytes, cudaMemcpyDeviceToHost); },
      cudaErrorStreamCaptureUnsupported);
  expectInvalidates(
      stream_, mode, [] { return cudaDeviceSynchronize(); }, cudaErrorStreamCaptureUnsupported);
  expectInvalidates(
      stream_, mode,
      [] {
        void *pointer = nullptr;
        return cudaMalloc(&pointer, 16);
      },
      cudaErrorStreamCaptureUnsupported);
  // Work queued on an invalidated capture fails too.
  expectInvalidates(
      stream_, mode,
      [&] {
        (void)cudaStreamSynchronize(stream_);
        return cudaMemsetAsync(other, 0, sizeof(float), stream_);
      },
      cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(cudaFree(other), cudaSuccess);
}

TEST_F(Graphs, PageLockedCopiesAreCaptured) {
  std::vector<float> host(kCount, 7.0f);
  const size_t bytes = kCount * sizeof(float);
  ASSERT_EQ(cudaHostRegister(host.data(), bytes, cudaHostRegisterDefault), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(values_, host.data(), bytes, cudaMemcpyHostToDevice, stream_),
            cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  host.assign(kCount, 9.0f); // the copy reads the host memory when the graph runs
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  EXPECT_EQ(download(), std::vector<float>(kCount, 9.0f));
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaHostUnregister(host.data()), cudaSuccess);
}

TEST_F(Graphs, CaptureStartsAndEndsAsCudaAllows) {
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeRelaxed),
            cudaErrorStreamCaptureUnsupported); // the legacy default stream
  EXPECT_EQ(cudaStreamEndCapture(stream_, &graph), cudaErrorIllegalState);
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  EXPECT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
            cudaErrorIllegalState);
  cudaError_t fromAnotherThread = cudaSuccess;
  std::thread([&] { fromAnotherThread = cudaStreamEndCapture(stream_, &graph); }).join();
  EXPECT_EQ(fromAnotherThread, cudaErrorStreamCaptureWrongThread);
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  // A relaxed capture allows the calls CUDA calls unsafe, an allocation among them.
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), cudaSuccess);
  void *pointer = nullptr;
  EXPECT_EQ(cudaMalloc(&pointer, 16), cudaSuccess);
  EXPECT_EQ(cudaFree(pointer), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  (void)cudaGetLastError();
}

} // namespace
} // namespace bertc::sim::test
