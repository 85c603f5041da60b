// CUDA storage-type conversions and the fp16 loss-scaling check against the CPU: casts
// must round exactly as half_types.h (ties to even, subnormals, overflow to inf), and
// unscaling must flag any inf or NaN, including one the scaling itself creates.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

#include <limits>

namespace bertc::cuda::test {
namespace {

class PrecisionTest : public CudaTest {};

/// Finite floats over the whole exponent range, plus ties and the edges of fp16 and bf16.
std::vector<float> awkwardFloats() {
  std::mt19937 generator(5);
  std::vector<float> values;
  for (int i = 0; i < 20000; ++i) {
    uint32_t bits = generator();
    if (((bits >> 23) & 0xffu) == 0xffu) // skip inf and NaN
      bits &= ~(1u << 30);
    values.push_back(bitsToFloat(bits));
  }
  for (float edge : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1.0f + 1.0f / 2048.0f,
                     1.0f + 3.0f / 2048.0f, 5.9604645e-8f, 2.9802322e-8f, 6.1035156e-5f,
                     std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity()})
    values.push_back(edge);
  return values;
}

template <typename To> void checkRoundTrip(const std::vector<float> &values, const char *name) {
  std::vector<To> expected(values.size());
  std::vector<float> expectedBack(values.size());
  cpu::convert(values.data(), expected.data(), int64_t(values.size()));
  cpu::convert(expected.data(), expectedBack.data(), int64_t(values.size()));
  DeviceArray<float> dValues(values), dBack(values.size());
  DeviceArray<To> dNarrow(values.size());
  cuda::convert(dValues.get(), dNarrow.get(), int64_t(values.size()), nullptr);
  cuda::convert(dNarrow.get(), dBack.get(), int64_t(values.size()), nullptr);
  expectBitIdentical(dNarrow.download(), expected, std::string("float to ") + name);
  expectBitIdentical(dBack.download(), expectedBack, std::string(name) + " to float");
}

TEST_F(PrecisionTest, CastsRoundAsTheCpu) {
  const std::vector<float> values = awkwardFloats();
  checkRoundTrip<bf16>(values, "bf16");
  checkRoundTrip<fp16>(values, "fp16");
}

TEST_F(PrecisionTest, UnscaleFlagsNonFiniteValues) {
  const float inverseScale = 1.0f / 1024.0f;
  std::vector<float> grads = randomValues<float>(5000, 3, -100.0f, 100.0f);
  DeviceArray<int> flag(1);
  {
    std::vector<float> expected = grads;
    EXPECT_TRUE(cpu::unscaleGradients(expected.data(), int64_t(expected.size()), inverseScale));
    DeviceArray<float> dGrads(grads);
    cuda::unscaleGradients(dGrads.get(), int64_t(grads.size()), inverseScale, flag.get(), nullptr);
    expectBitIdentical(dGrads.download(), expected, "unscaled");
    EXPECT_EQ(flag.download()[0], 0);
  }
  for (const auto &[value, scale] :
       {std::pair{std::numeric_limits<float>::infinity(), inverseScale},
        std::pair{std::numeric_limits<float>::quiet_NaN(), inverseScale},
        std::pair{3e38f, 4.0f}}) { // finite, but not once scaled
    std::vector<float> bad = grads;
    bad[4321] = value;
    DeviceArray<float> dGrads(bad);
    cuda::unscaleGradients(dGrads.get(), int64_t(bad.size()), scale, flag.get(), nullptr);
    EXPECT_EQ(flag.download()[0], 1) << "value " << value << ", scale " << scale;
  }
  // Non-finite values in many threads and blocks all raise the one flag.
  std::vector<float> overflowing = grads;
  for (size_t i = 0; i < overflowing.size(); i += 7)
    overflowing[i] = std::numeric_limits<float>::infinity();
  DeviceArray<float> dGrads(overflowing);
  cuda::unscaleGradients(dGrads.get(), int64_t(overflowing.size()), inverseScale, flag.get(),
                         nullptr);
  EXPECT_EQ(flag.download()[0], 1);
}

} // namespace
} // namespace bertc::cuda::test
