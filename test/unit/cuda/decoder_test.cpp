// CUDA decoder kernels (mul, SiLU, RMSNorm, rotary embeddings) against their CPU twins on
// random inputs, in each storage type. Where the two compute the same fp32 operations in the
// same order (mul; rope's rotation on the simulated device, which calls the host's sincosf)
// the bits must agree; elsewhere the tolerance says what may differ.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

template <typename T> class DecoderTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(DecoderTest, StorageTypes, StorageTypeNames);

constexpr size_t kCount = 10007; // not a multiple of any block size

TYPED_TEST(DecoderTest, MulMatchesCpuBitForBit) {
  using T = TypeParam;
  const auto a = randomValues<T>(kCount, 1, -3.0f, 3.0f), b = randomValues<T>(kCount, 2);
  std::vector<T> expected(kCount);
  cpu::mul(a.data(), b.data(), expected.data(), int64_t(kCount));
  DeviceArray<T> da(a), db(b), out(kCount);
  cuda::mul(da.get(), db.get(), out.get(), int64_t(kCount), nullptr);
  // One fp32 product rounded once on both.
  expectBitIdentical(out.download(), expected, "mul");
}

// expf on a GPU may differ from the host's by an ulp: one rounding step of T, or a few
// fp32 ulps (Tolerance).
TYPED_TEST(DecoderTest, SiluForwardAndBackwardMatchCpu) {
  using T = TypeParam;
  const auto x = randomValues<T>(kCount, 3, -6.0f, 6.0f), dy = randomValues<T>(kCount, 4);
  std::vector<T> y(kCount), dx(kCount);
  cpu::siluForward(x.data(), y.data(), int64_t(kCount));
  cpu::siluBackward(dy.data(), x.data(), dx.data(), int64_t(kCount));
  DeviceArray<T> dX(x), dDy(dy), dY(kCount), dDx(kCount);
  cuda::siluForward(dX.get(), dY.get(), int64_t(kCount), nullptr);
  cuda::siluBackward(dDy.get(), dX.get(), dDx.get(), int64_t(kCount), nullptr);
  expectClose(dY.download(), y, Tolerance<T>::atol, Tolerance<T>::rtol, "silu");
  expectClose(dDx.download(), dx, Tolerance<T>::atol, Tolerance<T>::rtol, "silu grad");
}

// r is a double sum rounded to fp32 on both, in another order: the same float but where the
// orders differ in the last double bit. What follows is the same fp32 arithmetic, so the
// results agree within a few fp32 ulps or one rounding step of T (Tolerance); so does the
// weight gradient, an fp32 sum over the rows in the same order on both.
TYPED_TEST(DecoderTest, RmsNormForwardAndBackwardMatchCpu) {
  using T = TypeParam;
  constexpr int64_t rows = 300, cols = 77;
  constexpr size_t elements = size_t(rows * cols);
  const float eps = 1e-6f;
  const auto x = randomValues<T>(elements, 5, -2.0f, 2.0f);
  const auto w = randomValues<T>(size_t{cols}, 6, 0.5f, 1.5f);
  const auto dy = randomValues<T>(elements, 7);
  std::vector<T> y(elements), dx(elements);
  std::vector<float> dw(size_t{cols});
  cpu::rmsNormForward(x.data(), w.data(), y.data(), rows, cols, eps);
  cpu::rmsNormBackward(dy.data(), x.data(), w.data(), dx.data(), dw.data(), rows, cols, eps);
  DeviceArray<T> dX(x), dW(w), dDy(dy), dY(elements), dDx(elements);
  DeviceArray<float> dDw(size_t{cols}), rstd(size_t{rows});
  cuda::rmsNormForward(dX.get(), dW.get(), dY.get(), rows, cols, eps, nullptr);
  cuda::rmsNormBackward(dDy.get(), dX.get(), dW.get(), dDx.get(), dDw.get(), rstd.get(), rows, cols,
                        eps, nullptr);
  expectClose(dY.download(), y, Tolerance<T>::atol, Tolerance<T>::rtol, "rms_norm");
  expectClose(dDx.download(), dx, Tolerance<T>::atol, Tolerance<T>::rtol, "rms_norm dx");
  expectClose(dDw.download(), dw, Tolerance<T>::atol, Tolerance<T>::rtol, "rms_norm dweight");
}

// fp32 within 1e-6 (a GPU's sincosf may differ from the host's by an ulp or two of values
// at most 1, times |x| <= 1); 16-bit within one rounding step of T.
TYPED_TEST(DecoderTest, RopeForwardAndBackwardMatchCpu) {
  using T = TypeParam;
  constexpr int64_t tokens = 37, heads = 3, headDim = 16, cols = heads * headDim;
  constexpr size_t elements = size_t(tokens * cols);
  std::vector<int32_t> positions(size_t{tokens});
  for (int64_t t = 0; t < tokens; ++t)
    positions[size_t(t)] = int32_t((t * 7) % 23); // packed: positions restart, repeat
  std::vector<float> invFreq(size_t{headDim / 2});
  for (size_t i = 0; i < invFreq.size(); ++i)
    invFreq[i] = float(std::pow(10000.0, -2.0 * double(i) / double(headDim)));
  const auto x = randomValues<T>(elements, 8);
  const auto dy = randomValues<T>(elements, 9);
  std::vector<T> y(elements), dx(elements);
  cpu::ropeForward(x.data(), positions.data(), y.data(), tokens, heads, headDim, invFreq.data());
  cpu::ropeBackward(dy.data(), positions.data(), dx.data(), tokens, heads, headDim, invFreq.data());
  DeviceArray<T> dX(x), dDy(dy), dY(elements), dDx(elements);
  DeviceArray<int32_t> dPositions(positions);
  cuda::ropeForward(dX.get(), dPositions.get(), dY.get(), tokens, heads, headDim, invFreq.data(),
                    nullptr);
  cuda::ropeBackward(dDy.get(), dPositions.get(), dDx.get(), tokens, heads, headDim, invFreq.data(),
                     nullptr);
  const double atol = std::is_same_v<T, float> ? 1e-6 : Tolerance<T>::atol;
  const double rtol = std::is_same_v<T, float> ? 0.0 : Tolerance<T>::rtol;
  expectClose(dY.download(), y, atol, rtol, "rope");
  expectClose(dDx.download(), dx, atol, rtol, "rope grad");
}

} // namespace
} // namespace bertc::cuda::test
