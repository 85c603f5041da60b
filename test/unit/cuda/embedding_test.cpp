// CUDA embedding gather and its atomic-free backward against the CPU. The backward sorts
// the tokens of each tile of 512 by id and sums each id's run a 32-position chunk at a
// time, so the id patterns below put runs across chunk and tile boundaries, exactly on
// them, inside one chunk, and one id on every token; a hidden size of 70 leaves the last
// 32-column slice partial. With small integers as gradients every sum is exact, so the
// CUDA table must equal the CPU's bit for bit whatever order it adds in: any token added
// to the wrong row, twice or not at all shows. The accumulating backward adds the same
// sums into a gradient slot as it is.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

template <typename T> class EmbeddingTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(EmbeddingTest, StorageTypes, StorageTypeNames);

constexpr int64_t kTokens = 2500, kVocab = 53, kHidden = 70;

/// A long run of id 0 across the first tile boundary, then random ids, the last id last.
std::vector<int32_t> mixedIds() {
  std::mt19937 generator(11);
  std::vector<int32_t> ids(kTokens);
  for (int64_t t = 0; t < kTokens; ++t)
    ids[t] = t < 1100 ? 0 : int32_t(generator() % kVocab);
  ids[kTokens - 1] = kVocab - 1;
  return ids;
}

/// The id patterns of the backward tests, by name.
std::vector<std::pair<std::string, std::vector<int32_t>>> idPatterns() {
  std::vector<int32_t> everyIdThirtyTwoTimes(kTokens), everyIdThirtyThreeTimes(kTokens),
      distinct(kTokens), oneId(kTokens, 7), interleaved(kTokens);
  for (int64_t t = 0; t < kTokens; ++t) {
    everyIdThirtyTwoTimes[t] = int32_t(t / 32 % kVocab); // runs exactly fill chunks
    everyIdThirtyThreeTimes[t] = int32_t(t / 33 % kVocab);
    distinct[t] = int32_t(kTokens - 1 - t);
    interleaved[t] = int32_t(t % 3); // three runs per tile, each spanning many chunks
  }
  return {{"mixed", mixedIds()},
          {"every id 32 times", everyIdThirtyTwoTimes},
          {"every id 33 times", everyIdThirtyThreeTimes},
          {"distinct", distinct},
          {"one id", oneId},
          {"interleaved", interleaved}};
}

/// Gradients that are small integers: exact in every storage type, and sums of them are
/// exact in fp32 in any order.
template <typename T> std::vector<T> integerValues(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<T> values(count);
  for (T &value : values)
    value = fromFloat<T>(float(int(generator() % 9) - 4));
  return values;
}

/// The CUDA backward over a table first filled with garbage (every row must be written).
template <typename T>
std::vector<float> cudaBackward(const std::vector<int32_t> &ids, const std::vector<T> &dout,
                                int64_t vocab, int64_t paddingIdx = -1) {
  DeviceArray<int32_t> dIds(ids);
  DeviceArray<T> dDout(dout);
  DeviceArray<float> dTable(std::vector<float>(vocab * kHidden, 42.0f));
  cuda::embeddingBackward(dIds.get(), dDout.get(), dTable.get(), int64_t(ids.size()), vocab,
                          kHidden, paddingIdx, nullptr);
  return dTable.download();
}

TYPED_TEST(EmbeddingTest, ForwardGathersRows) {
  using T = TypeParam;
  const auto ids = mixedIds();
  const auto table = randomValues<T>(kVocab * kHidden, 1);
  std::vector<T> expected(kTokens * kHidden);
  cpu::embeddingForward(ids.data(), table.data(), expected.data(), kTokens, kHidden);
  DeviceArray<int32_t> dIds(ids);
  DeviceArray<T> dTable(table), out(kTokens * kHidden);
  cuda::embeddingForward(dIds.get(), dTable.get(), out.get(), kTokens, kHidden, nullptr);
  expectBitIdentical(out.download(), expected, "embedding");
}

TYPED_TEST(EmbeddingTest, BackwardAddsEveryTokenToItsRowOnce) {
  using T = TypeParam;
  const auto dout = integerValues<T>(kTokens * kHidden, 2);
  for (const auto &[name, ids] : idPatterns()) {
    const int64_t vocab = name == "distinct" ? kTokens : kVocab;
    std::vector<float> expected(vocab * kHidden);
    cpu::embeddingBackward(ids.data(), dout.data(), expected.data(), kTokens, vocab, kHidden, -1);
    expectBitIdentical(cudaBackward(ids, dout, vocab), expected, "dtable, ids " + name);
  }
}

/// The CUDA accumulating backward into a copy of `slot`.
template <typename T>
std::vector<float> cudaBackwardAccumulate(const std::vector<int32_t> &ids,
                                          const std::vector<T> &dout, std::vector<float> slot,
                                          int64_t paddingIdx = -1) {
  DeviceArray<int32_t> dIds(ids);
  DeviceArray<T> dDout(dout);
  DeviceArray<float> dSlot(slot);
  cuda::embeddingBackwardAccumulate(dIds.get(), dDout.get(), dSlot.get(), int64_t(ids.size()),
                                    int64_t(slot.size()) / kHidden, kHidden, paddingIdx, nullptr);
  return dSlot.download();
}

TYPED_TEST(EmbeddingTest, BackwardAccumulateAddsEveryTokenIntoTheSlotOnce) {
  using T = TypeParam;
  const auto dout = integerValues<T>(kTokens * kHidden, 4);
  for (const auto &[name, ids] : idPatterns()) {
    const int64_t vocab = name == "distinct" ? kTokens : kVocab;
    const auto slotValues = integerValues<float>(vocab * kHidden, 5);
    std::vector<float> expected = slotValues;
    cpu::embeddingBackwardAccumulate(ids.data(), dout.data(), expected.data(), kTokens, vocab,
                                     kHidden, -1);
    expectBitIdentical(cudaBackwardAccumulate(ids, dout, slotValues), expected,
                       "slot, ids " + name);
  }
}

/// The padding id's row: zero after the backward, as it was after the accumulating one; every
/// other row as without a padding id.
TYPED_TEST(EmbeddingTest, BackwardLeavesThePaddingRowAlone) {
  using T = TypeParam;
  const auto dout = integerValues<T>(kTokens * kHidden, 8);
  for (const auto &[name, ids] : idPatterns()) {
    const int64_t vocab = name == "distinct" ? kTokens : kVocab;
    const int64_t padding = ids[kTokens / 2];
    const auto isPaddingRow = [&](size_t i) { return int64_t(i) / kHidden == padding; };
    const auto slotValues = integerValues<float>(vocab * kHidden, 9);
    std::vector<float> table = cudaBackward(ids, dout, vocab);
    std::vector<float> slot = cudaBackwardAccumulate(ids, dout, slotValues);
    for (size_t i = 0; i < table.size(); ++i) {
      table[i] = isPaddingRow(i) ? 0.0f : table[i];
      slot[i] = isPaddingRow(i) ? slotValues[i] : slot[i];
    }
    expectBitIdentical(cudaBackward(ids, dout, vocab, padding), table, "dtable, ids " + name);
    expectBitIdentical(cudaBackwardAccumulate(ids, dout, slotValues, padding), slot,
                       "slot, ids " + name);
  }
}

TYPED_TEST(EmbeddingTest, BackwardAccumulateInOneTileHasTheBitsOfBackwardThenAdd) {
  using T = TypeParam;
  const std::vector<int32_t> mixed = mixedIds();
  const std::vector<int32_t> ids(mixed.end() - 512, mixed.end());
  const auto dout = randomValues<T>(ids.size() * kHidden, 6);
  const auto slotValues = randomValues<float>(kVocab * kHidden, 7);
  std::vector<float> expected = cudaBackward(ids, dout, kVocab);
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] += slotValues[i];
  expectBitIdentical(cudaBackwardAccumulate(ids, dout, slotValues), expected, "slot");
}

TYPED_TEST(EmbeddingTest, BackwardMatchesCpuAndIsDeterministic) {
  using T = TypeParam;
  const auto ids = mixedIds();
  const auto dout = randomValues<T>(kTokens * kHidden, 3);
  std::vector<float> expected(kVocab * kHidden);
  cpu::embeddingBackward(ids.data(), dout.data(), expected.data(), kTokens, kVocab, kHidden, -1);
  const std::vector<float> first = cudaBackward(ids, dout, kVocab);
  // Sums of up to 1100 values in a different order: a few fp32 ulps of the sum's size.
  expectClose(first, expected, 1e-4, 1e-5, "dtable");
  expectBitIdentical(cudaBackward(ids, dout, kVocab), first, "dtable rerun");
}

} // namespace
} // namespace bertc::cuda::test
