// CUDA elementwise kernels (add, scale, erf and tanh GELU, tanh, ReLU, gradient accumulation)
// against their CPU twins on random inputs.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

#include <cmath>
#include <limits>

namespace bertc::cuda::test {
namespace {

template <typename T> class ElementwiseTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(ElementwiseTest, StorageTypes, StorageTypeNames);

constexpr size_t kCount = 10007; // not a multiple of any block size

TYPED_TEST(ElementwiseTest, AddMatchesCpu) {
  using T = TypeParam;
  const auto a = randomValues<T>(kCount, 1), b = randomValues<T>(kCount, 2);
  std::vector<T> expected(kCount);
  cpu::add(a.data(), b.data(), expected.data(), int64_t(kCount));
  DeviceArray<T> da(a), db(b), out(kCount);
  cuda::add(da.get(), db.get(), out.get(), int64_t(kCount), nullptr);
  // One fp32 add rounded once: the same bits as the CPU.
  expectBitIdentical(out.download(), expected, "add");
}

TYPED_TEST(ElementwiseTest, GeluForwardAndBackwardMatchCpu) {
  using T = TypeParam;
  const auto x = randomValues<T>(kCount, 3, -4.0f, 4.0f), dy = randomValues<T>(kCount, 4);
  std::vector<T> y(kCount), dx(kCount);
  cpu::geluForward(x.data(), y.data(), int64_t(kCount));
  cpu::geluBackward(dy.data(), x.data(), dx.data(), int64_t(kCount));
  DeviceArray<T> dX(x), dDy(dy), dY(kCount), dDx(kCount);
  cuda::geluForward(dX.get(), dY.get(), int64_t(kCount), nullptr);
  cuda::geluBackward(dDy.get(), dX.get(), dDx.get(), int64_t(kCount), nullptr);
  expectClose(dY.download(), y, Tolerance<T>::atol, Tolerance<T>::rtol, "gelu");
  expectClose(dDx.download(), dx, Tolerance<T>::atol, Tolerance<T>::rtol, "gelu grad");
}

// The tanh GELU's formula is the CPU's (gelu_tanh.h): on the simulated device, whose tanhf is
// the C library's, the same bits; on a GPU its tanhf is within a few ulps of the host's.
TYPED_TEST(ElementwiseTest, GeluTanhForwardAndBackwardMatchCpu) {
  using T = TypeParam;
  const auto x = randomValues<T>(kCount, 7, -6.0f, 6.0f), dy = randomValues<T>(kCount, 8);
  std::vector<T> y(kCount), dx(kCount);
  cpu::geluTanhForward(x.data(), y.data(), int64_t(kCount));
  cpu::geluTanhBackward(dy.data(), x.data(), dx.data(), int64_t(kCount));
  DeviceArray<T> dX(x), dDy(dy), dY(kCount), dDx(kCount);
  cuda::geluTanhForward(dX.get(), dY.get(), int64_t(kCount), nullptr);
  cuda::geluTanhBackward(dDy.get(), dX.get(), dDx.get(), int64_t(kCount), nullptr);
#if defined(BERTC_CUDA_SIM)
  expectBitIdentical(dY.download(), y, "gelu tanh");
  expectBitIdentical(dDx.download(), dx, "gelu tanh grad");
#else
  expectClose(dY.download(), y, Tolerance<T>::atol, Tolerance<T>::rtol, "gelu tanh");
  expectClose(dDx.download(), dx, Tolerance<T>::atol, Tolerance<T>::rtol, "gelu tanh grad");
#endif
}

TYPED_TEST(ElementwiseTest, TanhForwardAndBackwardMatchCpu) {
  using T = TypeParam;
  const auto x = randomValues<T>(kCount, 5, -3.0f, 3.0f), dy = randomValues<T>(kCount, 6);
  std::vector<T> y(kCount), dx(kCount);
  cpu::tanhForward(x.data(), y.data(), int64_t(kCount));
  cpu::tanhBackward(dy.data(), y.data(), dx.data(), int64_t(kCount));
  DeviceArray<T> dX(x), dDy(dy), dY(kCount), dDx(kCount);
  cuda::tanhForward(dX.get(), dY.get(), int64_t(kCount), nullptr);
  cuda::tanhBackward(dDy.get(), dY.get(), dDx.get(), int64_t(kCount), nullptr);
  expectClose(dY.download(), y, Tolerance<T>::atol, Tolerance<T>::rtol, "tanh");
  expectClose(dDx.download(), dx, Tolerance<T>::atol, Tolerance<T>::rtol, "tanh grad");
}

TYPED_TEST(ElementwiseTest, ReluForwardAndBackwardMatchCpuBitForBit) {
  using T = TypeParam;
  auto x = randomValues<T>(kCount, 9, -3.0f, 3.0f);
  const auto dy = randomValues<T>(kCount, 10);
  // A NaN stays NaN, as PyTorch's relu keeps it (fmaxf would make it 0); -0 stays -0.
  x[0] = fromFloat<T>(std::numeric_limits<float>::quiet_NaN());
  x[1] = fromFloat<T>(-0.0f);
  std::vector<T> y(kCount), dx(kCount);
  cpu::reluForward(x.data(), y.data(), int64_t(kCount));
  cpu::reluBackward(dy.data(), y.data(), dx.data(), int64_t(kCount));
  DeviceArray<T> dX(x), dDy(dy), dY(kCount), dDx(kCount);
  cuda::reluForward(dX.get(), dY.get(), int64_t(kCount), nullptr);
  cuda::reluBackward(dDy.get(), dY.get(), dDx.get(), int64_t(kCount), nullptr);
  std::vector<T> gotY = dY.download();
  EXPECT_TRUE(std::isnan(toFloat(gotY[0])) && std::isnan(toFloat(y[0])));
  gotY[0] = y[0]; // both NaN; the 16-bit conversions may choose different NaN payloads
  expectBitIdentical(gotY, y, "relu");
  expectBitIdentical(dDx.download(), dx, "relu grad");
}

TYPED_TEST(ElementwiseTest, ScaleMatchesCpu) {
  using T = TypeParam;
  const auto x = randomValues<T>(kCount, 9);
  std::vector<T> expected(kCount);
  cpu::scale(x.data(), expected.data(), 0.35f, int64_t(kCount));
  DeviceArray<T> dX(x), out(kCount);
  cuda::scale(dX.get(), out.get(), 0.35f, int64_t(kCount), nullptr);
  expectBitIdentical(out.download(), expected, "scale");
  cuda::scale(dX.get(), dX.get(), 0.35f, int64_t(kCount), nullptr);
  expectBitIdentical(dX.download(), expected, "scale in place");
}

TYPED_TEST(ElementwiseTest, AccumulateMatchesCpu) {
  using T = TypeParam;
  const auto g = randomValues<T>(kCount, 7);
  std::vector<float> grad = randomValues<float>(kCount, 8);
  DeviceArray<T> dG(g);
  DeviceArray<float> dGrad(grad);
  cuda::accumulate(dG.get(), dGrad.get(), int64_t(kCount), nullptr);
  cpu::accumulate(g.data(), grad.data(), int64_t(kCount));
  expectBitIdentical(dGrad.download(), grad, "accumulate");
}

} // namespace
} // namespace bertc::cuda::test
