// CUDA bias kernels against the CPU: the row-broadcast add and the bias gradient, a column
// sum in one launch (row slices of 256, at most 64 of them, then the slices added by the
// last block of each grid column, found by its ticket), compared with cpu::biasBackward and
// checked to be deterministic, and its accumulating form (into a gradient slot). With small
// integers as gradients every sum is exact, so any slice count and any width must give the
// CPU's bits: a row summed twice or missed at a slice boundary, or a tile the last block
// leaves out, shows; and every ticket must be back at zero after each sum.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

#include <algorithm>

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

/// The bias gradient of dy [rows, cols].
template <typename T>
std::vector<float> cudaBiasBackward(const std::vector<T> &dy, int64_t rows, int64_t cols) {
  DeviceArray<T> dDy(dy);
  DeviceArray<float> db(cols),
      partials(std::max<int64_t>(1, biasBackwardWorkspaceFloats(rows, cols)));
  DeviceArray<unsigned> tickets(kColumnSumTickets);
  cuda::biasBackward(dDy.get(), db.get(), partials.get(), tickets.get(), rows, cols, nullptr);
  expectTicketsAtZero(tickets, std::to_string(rows) + "x" + std::to_string(cols));
  return db.download();
}

TYPED_TEST(BiasTest, BiasBackwardMatchesCpuAndIsDeterministic) {
  using T = TypeParam;
  // Two slices of 301 rows; four slices, the last of 232 rows.
  for (int64_t rows : {kRows, int64_t(1000)}) {
    const auto dy = randomValues<T>(rows * kCols, 4);
    std::vector<float> expected(kCols);
    cpu::biasBackward(dy.data(), expected.data(), rows, kCols);
    const std::vector<float> first = cudaBiasBackward(dy, rows, kCols);
    const std::string shape = std::to_string(rows) + "x" + std::to_string(kCols);
    expectClose(first, expected, 1e-5, 1e-5, "db " + shape);
    expectBitIdentical(cudaBiasBackward(dy, rows, kCols), first, "db rerun " + shape);
  }
}

// The accumulating form adds the finished sum into a gradient slot: exactly slot + db, with
// one slice (each block adds its columns' sums) and with four (the last block of each grid
// column adds them).
TYPED_TEST(BiasTest, BiasBackwardAccumulateAddsTheSumToTheSlot) {
  using T = TypeParam;
  for (int64_t rows : {int64_t(200), int64_t(1000)}) {
    const auto dy = randomValues<T>(rows * kCols, 6);
    const auto start = randomValues<float>(kCols, 7);
    const std::vector<float> sum = cudaBiasBackward(dy, rows, kCols);
    std::vector<float> expected(kCols);
    for (int64_t c = 0; c < kCols; ++c)
      expected[c] = start[c] + sum[c];
    DeviceArray<T> dDy(dy);
    DeviceArray<float> slot(start),
        partials(std::max<int64_t>(1, biasBackwardWorkspaceFloats(rows, kCols)));
    DeviceArray<unsigned> tickets(kColumnSumTickets);
    cuda::biasBackwardAccumulate(dDy.get(), slot.get(), partials.get(), tickets.get(), rows, kCols,
                                 nullptr);
    expectTicketsAtZero(tickets, "accumulating " + std::to_string(rows) + " rows");
    expectBitIdentical(slot.download(), expected, "slot + db, " + std::to_string(rows) + " rows");
  }
}

TYPED_TEST(BiasTest, EverySliceCountAddsEveryRowOnce) {
  using T = TypeParam;
  // One slice (no workspace); two; four; 64 slices of 257 rows (more rows than 64 slices
  // of 256 hold); tiles of 32 columns: wider than a grid row of kColumnSumTickets blocks
  // takes, so that blocks take two tiles each, with one slice and with two.
  const int64_t wide = 32 * kColumnSumTickets + kCols;
  for (const auto &[rows, cols] : {std::pair<int64_t, int64_t>{200, kCols},
                                   {kRows, kCols},
                                   {1000, kCols},
                                   {64 * kColumnSumSliceRows + 1, 5},
                                   {3, wide},
                                   {kRows, wide}}) {
    std::mt19937 generator(5);
    std::vector<T> dy(rows * cols);
    for (T &value : dy)
      value = fromFloat<T>(float(int(generator() % 9) - 4));
    std::vector<float> expected(cols);
    cpu::biasBackward(dy.data(), expected.data(), rows, cols);
    const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
    expectBitIdentical(cudaBiasBackward(dy, rows, cols), expected, shape);
  }
}

} // namespace
} // namespace bertc::cuda::test
