// The CUDA global gradient norm and clipping against their CPU twins (cpu::squaredNorm,
// cpu::clipByGlobalNorm), and the norm's run-to-run determinism.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

class GradientNormTest : public CudaTest {};

double referenceSquaredNorm(const std::vector<float> &x) {
  return cpu::squaredNorm(x.data(), int64_t(x.size()));
}

TEST_F(GradientNormTest, SquaredNormMatchesTheCpuAndIsDeterministic) {
  for (const size_t count : {size_t(1), size_t(1000), size_t(3000017)}) {
    const std::vector<float> x = randomValues<float>(count, uint32_t(count));
    DeviceArray<float> dX(x), result(1);
    DeviceArray<double> partials(kSquaredNormPartials);
    squaredNorm(dX.get(), int64_t(count), partials.get(), result.get(), nullptr);
    const float first = result.download()[0];
    EXPECT_NEAR(first, referenceSquaredNorm(x), 1e-6 * referenceSquaredNorm(x)) << count;
    squaredNorm(dX.get(), int64_t(count), partials.get(), result.get(), nullptr);
    EXPECT_EQ(result.download()[0], first) << "rerun, " << count;
  }
}

TEST_F(GradientNormTest, ClipScalesOnlyAboveTheMaximum) {
  const std::vector<float> grads = randomValues<float>(4099, 2);
  const float norm = float(std::sqrt(referenceSquaredNorm(grads)));
  for (const float maxNorm : {0.25f * norm, 4.0f * norm}) {
    DeviceArray<float> dGrads(grads), squared(1);
    DeviceArray<double> partials(kSquaredNormPartials);
    squaredNorm(dGrads.get(), int64_t(grads.size()), partials.get(), squared.get(), nullptr);
    clipByGlobalNorm(dGrads.get(), int64_t(grads.size()), squared.get(), maxNorm, nullptr);
    // The CPU twin scales by the device's squared norm: the scaling is compared bit for bit.
    std::vector<float> expected = grads;
    cpu::clipByGlobalNorm(expected.data(), int64_t(expected.size()), squared.download()[0],
                          maxNorm);
    expectBitIdentical(dGrads.download(), expected, "clipped, max " + std::to_string(maxNorm));
  }
}

// Below a norm of 16 clip_grad_norm_'s + 1e-6 changes the coefficient's float: norm 13
// and max 6.5 give 0.5 - 2^-25, not 0.5, and [3, 4, 0, -12] becomes [1.5, 2, 0, -6] each
// one float nearer 0 (GradientClipping.ScalesDownToTheMaximumNorm derives them). The
// squared norm 169 is the device's own, exact.
TEST_F(GradientNormTest, ClipAddsTheEpsilonToTheNorm) {
  const std::vector<float> grads = {3.0f, 4.0f, 0.0f, -12.0f};
  DeviceArray<float> dGrads(grads), squared(1);
  DeviceArray<double> partials(kSquaredNormPartials);
  squaredNorm(dGrads.get(), 4, partials.get(), squared.get(), nullptr);
  EXPECT_EQ(squared.download()[0], 169.0f);
  clipByGlobalNorm(dGrads.get(), 4, squared.get(), 6.5f, nullptr);
  expectBitIdentical(
      dGrads.download(),
      {std::nextafter(1.5f, 0.0f), std::nextafter(2.0f, 0.0f), 0.0f, -std::nextafter(6.0f, 0.0f)},
      "clipped to 6.5");
}

} // namespace
} // namespace bertc::cuda::test
