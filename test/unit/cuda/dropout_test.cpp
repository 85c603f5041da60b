// CUDA dropout against the CPU: the counter-based masks must be bit-identical (same kept
// elements, same scaled values) for every storage type, row offset and rate, with rows
// that end inside a group of four elements (one Philox call each); and a batch split into
// micro-batches gets the masks it gets whole.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

template <typename T> class DropoutTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(DropoutTest, StorageTypes, StorageTypeNames);

constexpr int64_t kRows = 37, kRowSize = 1031;

TYPED_TEST(DropoutTest, MasksAreBitIdenticalToCpu) {
  using T = TypeParam;
  const auto x = randomValues<T>(kRows * kRowSize, 1);
  for (const float rate : {0.1f, 0.5f}) {
    const DropoutKey key{0x123456789abcdefull, 7, 3, 64};
    std::vector<T> expectedY(x.size()), expectedDx(x.size());
    cpu::dropoutForward(x.data(), expectedY.data(), kRows, kRowSize, rate, key);
    cpu::dropoutBackward(x.data(), expectedDx.data(), kRows, kRowSize, rate, key);
    DeviceArray<T> dX(x), dY(x.size()), dDx(x.size());
    cuda::dropoutForward(dX.get(), dY.get(), kRows, kRowSize, rate, key, nullptr);
    cuda::dropoutBackward(dX.get(), dDx.get(), kRows, kRowSize, rate, key, nullptr);
    expectBitIdentical(dY.download(), expectedY, "dropout forward, rate " + std::to_string(rate));
    expectBitIdentical(dDx.download(), expectedDx,
                       "dropout backward, rate " + std::to_string(rate));
  }
}

TYPED_TEST(DropoutTest, MicroBatchesGetTheWholeBatchsMasks) {
  using T = TypeParam;
  const auto x = randomValues<T>(kRows * kRowSize, 3);
  const DropoutKey whole{99, 4, 2, 0};
  DeviceArray<T> dX(x), dWhole(x.size()), dSplit(x.size());
  cuda::dropoutForward(dX.get(), dWhole.get(), kRows, kRowSize, 0.3f, whole, nullptr);
  // Rows [0, 10) as one micro-batch, rows [10, kRows) as the next.
  constexpr int64_t kFirst = 10;
  DropoutKey second = whole;
  second.firstRow = kFirst;
  cuda::dropoutForward(dX.get(), dSplit.get(), kFirst, kRowSize, 0.3f, whole, nullptr);
  cuda::dropoutForward(dX.get() + kFirst * kRowSize, dSplit.get() + kFirst * kRowSize,
                       kRows - kFirst, kRowSize, 0.3f, second, nullptr);
  expectBitIdentical(dSplit.download(), dWhole.download(), "split vs whole");
}

TYPED_TEST(DropoutTest, RateZeroCopies) {
  using T = TypeParam;
  const auto x = randomValues<T>(kRows * kRowSize, 2);
  DeviceArray<T> dX(x), dY(x.size());
  cuda::dropoutForward(dX.get(), dY.get(), kRows, kRowSize, 0.0f, DropoutKey{1, 1, 1, 0}, nullptr);
  expectBitIdentical(dY.download(), x, "rate 0");
}

} // namespace
} // namespace bertc::cuda::test
