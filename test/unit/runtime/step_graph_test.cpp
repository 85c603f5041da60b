// The CUDA runner's step graphs (runtime/cuda/step_graph.h) on the simulated device: a
// micro-step captured again with new arguments or other grids updates the executable graph,
// one with other launches instantiates it again, and every replay computes what launching
// directly would.
#include "step_graph.h" // runtime/cuda: the runner's own header

#include "bertc/cuda_sim/launch.h"

#include <gtest/gtest.h>

#include <vector>

namespace bertc::cuda::test {
namespace {

constexpr int kCount = 8;

/// values[i] = values[i] * factor + offset, for the i the launch's grid covers.
__global__ void scaleAndShift(float *values, float factor, float offset) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  values[i] = values[i] * factor + offset;
}

class StepGraphTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&values_), kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(values_, 0, kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    EXPECT_EQ(cudaFree(values_), cudaSuccess);
  }

  /// Queues scaleAndShift over the first `blocks` * (kCount / 2) values.
  void queueScaleAndShift(unsigned blocks, float factor, float offset) {
    sim::launchKernel(
        {"scaleAndShift", blocks, kCount / 2, 0, stream_},
        [](auto... arguments) { scaleAndShift(arguments...); }, values_, factor, offset);
  }

  std::vector<float> download() {
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    std::vector<float> host(kCount);
    EXPECT_EQ(cudaMemcpy(host.data(), values_, kCount * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }

  float *values_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

TEST_F(StepGraphTest, UpdatesForOtherArgumentsAndGridsAndInstantiatesForOtherLaunches) {
  StepGraph graph(stream_);
  graph.run([&] { queueScaleAndShift(2, 1.0f, 1.0f); }); // the first: instantiated
  EXPECT_EQ(download(), std::vector<float>(kCount, 1.0f));
  graph.run([&] { queueScaleAndShift(2, 3.0f, 0.0f); }); // new arguments: updated
  EXPECT_EQ(download(), std::vector<float>(kCount, 3.0f));
  graph.run([&] { queueScaleAndShift(1, 1.0f, 1.0f); }); // a smaller grid: updated
  EXPECT_EQ(download(), (std::vector<float>{4, 4, 4, 4, 3, 3, 3, 3}));
  graph.run([&] { // another launch: instantiated again
    queueScaleAndShift(2, 2.0f, 0.0f);
    queueScaleAndShift(2, 1.0f, -1.0f);
  });
  EXPECT_EQ(download(), (std::vector<float>{7, 7, 7, 7, 5, 5, 5, 5}));
  EXPECT_EQ(graph.report(), "CUDA graphs: 4 micro-steps replayed (2 instantiated, 2 updated)");
}

} // namespace
} // namespace bertc::cuda::test
