// CUDA embedding gather and its atomic-free backward against the CPU, with repeated ids:
// one id on a long run of tokens (as token types or padding), ids at both ends of the
// table, and a hidden size spanning a partial column slice.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

template <typename T> class EmbeddingTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(EmbeddingTest, StorageTypes, StorageTypeNames);

constexpr int64_t kTokens = 700, kVocab = 53, kHidden = 300;

std::vector<int32_t> tokenIds() {
  std::mt19937 generator(11);
  std::vector<int32_t> ids(kTokens);
  for (int64_t t = 0; t < kTokens; ++t)
    ids[t] = t < 300 ? 0 : int32_t(generator() % kVocab); // a long run of id 0 first
  ids[kTokens - 1] = kVocab - 1;
  return ids;
}

TYPED_TEST(EmbeddingTest, ForwardGathersRows) {
  using T = TypeParam;
  const auto ids = tokenIds();
  const auto table = randomValues<T>(kVocab * kHidden, 1);
  std::vector<T> expected(kTokens * kHidden);
  cpu::embeddingForward(ids.data(), table.data(), expected.data(), kTokens, kHidden);
  DeviceArray<int32_t> dIds(ids);
  DeviceArray<T> dTable(table), out(kTokens * kHidden);
  cuda::embeddingForward(dIds.get(), dTable.get(), out.get(), kTokens, kHidden, nullptr);
  expectBitIdentical(out.download(), expected, "embedding");
}

TYPED_TEST(EmbeddingTest, BackwardMatchesCpuAndIsDeterministic) {
  using T = TypeParam;
  const auto ids = tokenIds();
  const auto dout = randomValues<T>(kTokens * kHidden, 2);
  std::vector<float> expected(kVocab * kHidden);
  cpu::embeddingBackward(ids.data(), dout.data(), expected.data(), kTokens, kVocab, kHidden);
  DeviceArray<int32_t> dIds(ids);
  DeviceArray<T> dDout(dout);
  std::vector<float> garbage(kVocab * kHidden, 42.0f); // every row must be overwritten
  DeviceArray<float> dTable(garbage);
  cuda::embeddingBackward(dIds.get(), dDout.get(), dTable.get(), kTokens, kVocab, kHidden, nullptr);
  const std::vector<float> first = dTable.download();
  // Sums of up to 300 values in a different order: a few fp32 ulps of the sum's size.
  expectClose(first, expected, 1e-4, 1e-5, "dtable");
  cuda::embeddingBackward(dIds.get(), dDout.get(), dTable.get(), kTokens, kVocab, kHidden, nullptr);
  expectBitIdentical(dTable.download(), first, "dtable rerun");
}

} // namespace
} // namespace bertc::cuda::test
