// CUDA bias kernels against the CPU: the row-broadcast add and the bias gradient (a column
// sum, compared with cpu::biasBackward and checked to be deterministic).
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

template <typename T> class BiasTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(BiasTest, StorageTypes, StorageTypeNames);

constexpr int64_t kRows = 301, kCols = 77; // partial column tiles and row groups

TYPED_TEST(BiasTest, BiasAddMatchesCpu) {
  using T = TypeParam;
  const auto y = randomValues<T>(kRows * kCols, 1), bias = randomValues<T>(kCols, 2);
  std::vector<T> expected(y.size());
  for (int64_t r = 0; r < kRows; ++r)
    cpu::add(y.data() + r * kCols, bias.data(), expected.data() + r * kCols, kCols);
  DeviceArray<T> dY(y), dBias(bias);
  cuda::biasAdd(dY.get(), dBias.get(), kRows, kCols, nullptr);
  expectBitIdentical(dY.download(), expected, "y + bias");
}

TYPED_TEST(BiasTest, BiasBackwardMatchesCpuAndIsDeterministic) {
  using T = TypeParam;
  const auto dy = randomValues<T>(kRows * kCols, 3);
  std::vector<float> expected(kCols);
  cpu::biasBackward(dy.data(), expected.data(), kRows, kCols);
  DeviceArray<T> dDy(dy);
  DeviceArray<float> db(kCols);
  cuda::biasBackward(dDy.get(), db.get(), kRows, kCols, nullptr);
  const std::vector<float> first = db.download();
  expectClose(first, expected, 1e-5, 1e-5, "db");
  cuda::biasBackward(dDy.get(), db.get(), kRows, kCols, nullptr);
  expectBitIdentical(db.download(), first, "db rerun");
}

} // namespace
} // namespace bertc::cuda::test
