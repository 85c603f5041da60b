// The GELU (erf and tanh forms) and dropout backwards fused with a bias gradient against the
// two launches they replace (geluBackward, geluTanhBackward or dropoutBackward, then
// biasBackwardAccumulate into a gradient slot or biasBackward into a bias gradient): dx and the
// slot or gradient bit-identical, with one row slice and several, widths that are and are not
// multiples of dropout's groups of four (a thread's group of columns then straddles two Philox
// calls, or a row's end), samples of several tokens or of one, and dx written over dy. The
// plain kernels are checked against the CPU in elementwise_test.cpp, dropout_test.cpp and
// bias_test.cpp.
#include "cuda_test_support.h"

#include "bertc/runtime/cuda_kernels.h"

#include <algorithm>

namespace bertc::cuda::test {
namespace {

template <typename T> class BiasFusedTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(BiasFusedTest, StorageTypes, StorageTypeNames);

/// [rows, cols] of samples * tokensPerSample rows.
struct Shape {
  int64_t samples, tokensPerSample, cols;
  int64_t rows() const { return samples * tokensPerSample; }
  std::string name() const {
    return std::to_string(samples) + "x" + std::to_string(tokensPerSample) + "x" +
           std::to_string(cols);
  }
};

// 1 slice with 768 columns; 2 slices, 77 columns (not a multiple of 4) over samples of 7
// tokens; 4 slices of one-token samples, 6 columns (groups straddle the rows).
const Shape kShapes[] = {{20, 10, 768}, {43, 7, 77}, {1000, 1, 6}};

/// The gradient slot a fused launch and the separate ones start from and add into, and the
/// bias gradients the overwriting forms write.
struct Slots {
  DeviceArray<float> fused, separate, fusedGradient, separateGradient, partials;
  DeviceArray<unsigned> tickets;
  Slots(const Shape &shape, uint64_t seed)
      : fused(randomValues<float>(shape.cols, seed)),
        separate(randomValues<float>(shape.cols, seed)), fusedGradient(shape.cols),
        separateGradient(shape.cols),
        partials(std::max<int64_t>(1, biasBackwardWorkspaceFloats(shape.rows(), shape.cols))),
        tickets(kColumnSumTickets) {}
  /// Expects both forms' bias gradients bit-identical to the separate launches'.
  void expectSameBias(const std::string &what) const {
    expectBitIdentical(fused.download(), separate.download(), what + " slot");
    expectBitIdentical(fusedGradient.download(), separateGradient.download(), what + " gradient");
  }
};

/// A GELU's fused backwards (`fusedAccumulate` into the slot, `fused` into a bias gradient)
/// against its plain backward `separate` then the bias gradient's launches, on every shape.
template <typename T, typename Fused, typename Separate>
void checkGeluBackwardWithBias(Fused fusedAccumulate, Fused fused, Separate separate,
                               const std::string &what) {
  for (const Shape &shape : kShapes) {
    const int64_t n = shape.rows() * shape.cols;
    const auto dy = randomValues<T>(n, 1), x = randomValues<T>(n, 2, -3.0f, 3.0f);
    DeviceArray<T> dDy(dy), dX(x), fusedDx(n), separateDx(n), inPlace(dy);
    Slots slots(shape, 3);
    fusedAccumulate(dDy.get(), dX.get(), fusedDx.get(), slots.fused.get(), slots.partials.get(),
                    slots.tickets.get(), shape.rows(), shape.cols, nullptr);
    fused(dDy.get(), dX.get(), fusedDx.get(), slots.fusedGradient.get(), slots.partials.get(),
          slots.tickets.get(), shape.rows(), shape.cols, nullptr);
    separate(dDy.get(), dX.get(), separateDx.get(), n, nullptr);
    biasBackwardAccumulate(separateDx.get(), slots.separate.get(), slots.partials.get(),
                           slots.tickets.get(), shape.rows(), shape.cols, nullptr);
    biasBackward(separateDx.get(), slots.separateGradient.get(), slots.partials.get(),
                 slots.tickets.get(), shape.rows(), shape.cols, nullptr);
    expectBitIdentical(fusedDx.download(), separateDx.download(), what + " dx " + shape.name());
    slots.expectSameBias(what + " bias " + shape.name());
    fusedAccumulate(inPlace.get(), dX.get(), inPlace.get(), slots.fused.get(), slots.partials.get(),
                    slots.tickets.get(), shape.rows(), shape.cols, nullptr);
    expectBitIdentical(inPlace.download(), separateDx.download(),
                       what + " in place " + shape.name());
    expectTicketsAtZero(slots.tickets, what + " " + shape.name());
  }
}

TYPED_TEST(BiasFusedTest, GeluBackwardWithBiasGivesTheBitsOfTheTwoLaunches) {
  using T = TypeParam;
  checkGeluBackwardWithBias<T>(&geluBackwardBiasAccumulate<T>, &geluBackwardBias<T>,
                               &geluBackward<T>, "gelu");
}

TYPED_TEST(BiasFusedTest, GeluTanhBackwardWithBiasGivesTheBitsOfTheTwoLaunches) {
  using T = TypeParam;
  checkGeluBackwardWithBias<T>(&geluTanhBackwardBiasAccumulate<T>, &geluTanhBackwardBias<T>,
                               &geluTanhBackward<T>, "gelu tanh");
}

TYPED_TEST(BiasFusedTest, DropoutBackwardWithBiasGivesTheBitsOfTheTwoLaunches) {
  using T = TypeParam;
  const DropoutKey key{0x5eedull, 3, 9, 17};
  for (const Shape &shape : kShapes) {
    const int64_t n = shape.rows() * shape.cols, rowSize = shape.tokensPerSample * shape.cols;
    const auto dy = randomValues<T>(n, 4);
    DeviceArray<T> dDy(dy), fusedDx(n), separateDx(n), inPlace(dy);
    Slots slots(shape, 5);
    dropoutBackwardBiasAccumulate(dDy.get(), fusedDx.get(), slots.fused.get(), slots.partials.get(),
                                  slots.tickets.get(), shape.samples, shape.tokensPerSample,
                                  shape.cols, 0.25f, key, nullptr);
    dropoutBackwardBias(dDy.get(), fusedDx.get(), slots.fusedGradient.get(), slots.partials.get(),
                        slots.tickets.get(), shape.samples, shape.tokensPerSample, shape.cols,
                        0.25f, key, nullptr);
    dropoutBackward(dDy.get(), separateDx.get(), shape.samples, rowSize, 0.25f, key, nullptr);
    biasBackwardAccumulate(separateDx.get(), slots.separate.get(), slots.partials.get(),
                           slots.tickets.get(), shape.rows(), shape.cols, nullptr);
    biasBackward(separateDx.get(), slots.separateGradient.get(), slots.partials.get(),
                 slots.tickets.get(), shape.rows(), shape.cols, nullptr);
    const std::vector<T> expected = separateDx.download();
    const int64_t dropped = std::count_if(expected.begin(), expected.end(),
                                          [](T value) { return toFloat(value) == 0.0f; });
    EXPECT_GT(dropped, n / 8) << "a quarter of the values should be dropped";
    expectBitIdentical(fusedDx.download(), expected, "dropout dx " + shape.name());
    slots.expectSameBias("dropout bias " + shape.name());
    dropoutBackwardBiasAccumulate(inPlace.get(), inPlace.get(), slots.fused.get(),
                                  slots.partials.get(), slots.tickets.get(), shape.samples,
                                  shape.tokensPerSample, shape.cols, 0.25f, key, nullptr);
    expectBitIdentical(inPlace.download(), expected, "dropout in place " + shape.name());
    expectTicketsAtZero(slots.tickets, "dropout " + shape.name());
  }
}

// At rate 0 every value is kept as it is, as dropoutBackward's copy keeps it.
TYPED_TEST(BiasFusedTest, DropoutBackwardWithBiasAtRateZeroKeepsEveryValue) {
  using T = TypeParam;
  const Shape shape = kShapes[1];
  const int64_t n = shape.rows() * shape.cols;
  const auto dy = randomValues<T>(n, 6);
  DeviceArray<T> dDy(dy), fusedDx(n), separateDx(n);
  Slots slots(shape, 7);
  const DropoutKey key{1, 1, 1, 0};
  dropoutBackwardBiasAccumulate(dDy.get(), fusedDx.get(), slots.fused.get(), slots.partials.get(),
                                slots.tickets.get(), shape.samples, shape.tokensPerSample,
                                shape.cols, 0.0f, key, nullptr);
  biasBackwardAccumulate(dDy.get(), slots.separate.get(), slots.partials.get(), slots.tickets.get(),
                         shape.rows(), shape.cols, nullptr);
  expectBitIdentical(fusedDx.download(), dy, "dx at rate 0");
  expectBitIdentical(slots.fused.download(), slots.separate.download(), "bias slot at rate 0");
}

} // namespace
} // namespace bertc::cuda::test
