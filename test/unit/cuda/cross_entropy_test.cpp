// CUDA softmax cross-entropy (loss alone, and fused with its gradient) against the CPU, with
// more rows than the kernel has warps, rows wider than a warp, and ignored labels.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

class CrossEntropyTest : public CudaTest {};

void checkCrossEntropy(int64_t batch, int64_t classes) {
  const std::string shape = std::to_string(batch) + "x" + std::to_string(classes);
  const float normalizer = float(batch + 3); // a micro-batch of a larger effective batch
  const std::vector<float> logits = randomValues<float>(batch * classes, 1, -8.0f, 8.0f);
  std::vector<int32_t> labels(batch);
  for (int64_t r = 0; r < batch; ++r)
    labels[r] = r % 11 == 5 ? -100 : r % 13 == 7 ? int32_t(classes) : int32_t((r * 7) % classes);
  const float dloss = 2.5f;

  float expectedLoss = 0.0f;
  std::vector<float> expectedGrad(batch * classes);
  cpu::crossEntropyForward(logits.data(), labels.data(), &expectedLoss, batch, classes, normalizer);
  cpu::crossEntropyBackward(&dloss, logits.data(), labels.data(), expectedGrad.data(), batch,
                            classes, normalizer);

  DeviceArray<float> dLogits(logits), loss(1), lossOnly(1), dDloss(std::vector<float>{dloss});
  std::vector<float> garbage(batch * classes, 7.0f); // ignored rows must be zeroed
  DeviceArray<float> dGrad(garbage);
  DeviceArray<int32_t> dLabels(labels);
  cuda::crossEntropyForward(dLogits.get(), dLabels.get(), lossOnly.get(), batch, classes,
                            normalizer, nullptr);
  cuda::crossEntropyForwardBackward(dLogits.get(), dLabels.get(), loss.get(), dDloss.get(),
                                    dGrad.get(), batch, classes, normalizer, nullptr);
  // Double sums in a different order, rounded once to float.
  expectClose(lossOnly.download(), std::vector<float>{expectedLoss}, 1e-6, 1e-6, "loss " + shape);
  expectClose(loss.download(), std::vector<float>{expectedLoss}, 1e-6, 1e-6, "fused loss " + shape);
  expectClose(dGrad.download(), expectedGrad, 1e-7, 1e-6, "dlogits " + shape);
}

TEST_F(CrossEntropyTest, MatchesCpuForFewClasses) { checkCrossEntropy(70, 3); }

TEST_F(CrossEntropyTest, MatchesCpuForManyClasses) { checkCrossEntropy(45, 384); }

} // namespace
} // namespace bertc::cuda::test
