// Tests of the linear kernels (torch.nn.Linear layout, w [out, in]): the forward on a
// hand-computed product (with and without a bias), the three backward kernels against
// finite differences.
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

// x = [[1, 2, 3], [-1, 0, 2]], w = [[1, 0, -1], [2, 1, 0.5]], b = [0.5, -1]:
//   y00 = 1 - 3 + 0.5 = -1.5        y01 = 2 + 2 + 1.5 - 1 = 4.5
//   y10 = -1 - 2 + 0.5 = -2.5       y11 = -2 + 0 + 1 - 1 = -2
TEST(Linear, ForwardMatchesHandComputedProduct) {
  std::vector<float> x = {1, 2, 3, -1, 0, 2}, w = {1, 0, -1, 2, 1, 0.5f}, b = {0.5f, -1};
  std::vector<float> y(4);
  linearForward(x.data(), w.data(), b.data(), y.data(), 2, 3, 2);
  EXPECT_EQ(y, (std::vector<float>{-1.5f, 4.5f, -2.5f, -2.0f}));
}

// Without a bias (torch.nn.Linear(bias=False)) the same x and w give the product alone,
// whatever y held before (beta = 0):
//   y00 = 1 - 3 = -2    y01 = 2 + 2 + 1.5 = 5.5    y10 = -1 - 2 = -3    y11 = -2 + 1 = -1
TEST(Linear, ForwardWithoutBiasIsTheProductAlone) {
  std::vector<float> x = {1, 2, 3, -1, 0, 2}, w = {1, 0, -1, 2, 1, 0.5f};
  std::vector<float> y(4, 99.0f);
  linearForward(x.data(), w.data(), static_cast<const float *>(nullptr), y.data(), 2, 3, 2);
  EXPECT_EQ(y, (std::vector<float>{-2.0f, 5.5f, -3.0f, -1.0f}));
}

// dx = dy w, dw = dy^T x, db = column sums of dy, on the same numbers as above with
// dy = [[1, 0], [2, -1]]:
//   dx = [[1, 0, -1], [2*1 - 2, 0 - 1, -2 - 0.5]] = [[1, 0, -1], [0, -1, -2.5]]
//   dw = [[1*1 + 2*-1, 1*2 + 0, 1*3 + 2*2], [0 + 1, 0, 0 - 2]] = [[-1, 2, 7], [1, 0, -2]]
//   db = [3, -1]
TEST(Linear, BackwardMatchesHandComputedProducts) {
  std::vector<float> x = {1, 2, 3, -1, 0, 2}, w = {1, 0, -1, 2, 1, 0.5f}, dy = {1, 0, 2, -1};
  std::vector<float> dx(6), dw(6, 99.0f), db(2, 99.0f);
  linearBackwardInput(dy.data(), w.data(), dx.data(), 2, 3, 2);
  linearBackwardWeight(dy.data(), x.data(), dw.data(), 2, 3, 2);
  biasBackward(dy.data(), db.data(), 2, 2);
  EXPECT_EQ(dx, (std::vector<float>{1, 0, -1, 0, -1, -2.5f}));
  EXPECT_EQ(dw, (std::vector<float>{-1, 2, 7, 1, 0, -2}));
  EXPECT_EQ(db, (std::vector<float>{3, -1}));
}

// dx + addend with the dx above: [[1, 0, -1], [0, -1, -2.5]] + [[10, 20, 30], [40, 50, 60]],
// into a tensor of its own and over the addend.
TEST(Linear, BackwardInputAddsItsAddend) {
  std::vector<float> w = {1, 0, -1, 2, 1, 0.5f}, dy = {1, 0, 2, -1};
  const std::vector<float> addend = {10, 20, 30, 40, 50, 60};
  const std::vector<float> expected = {11, 20, 29, 40, 49, 57.5f};
  std::vector<float> dx(6, 99.0f), inPlace = addend;
  linearBackwardInputAdd(dy.data(), w.data(), addend.data(), dx.data(), 2, 3, 2);
  linearBackwardInputAdd(dy.data(), w.data(), inPlace.data(), inPlace.data(), 2, 3, 2);
  EXPECT_EQ(dx, expected);
  EXPECT_EQ(inPlace, expected);
}

// The accumulating form adds the same dw into a gradient slot holding ones (sgemm's
// beta = 1); a micro-batch of no rows leaves the slot as it is.
TEST(Linear, BackwardWeightAccumulatesIntoItsSlot) {
  std::vector<float> x = {1, 2, 3, -1, 0, 2}, dy = {1, 0, 2, -1};
  std::vector<float> slot(6, 1.0f);
  linearBackwardWeightAccumulate(dy.data(), x.data(), slot.data(), 2, 3, 2);
  EXPECT_EQ(slot, (std::vector<float>{0, 3, 8, 2, 1, -1}));
  linearBackwardWeightAccumulate(dy.data(), x.data(), slot.data(), 0, 3, 2);
  EXPECT_EQ(slot, (std::vector<float>{0, 3, 8, 2, 1, -1}));
}

// The bias gradient's accumulating form adds db = [3, -1] (above) into a slot of ones. On
// random values it adds the finished column sum, so the slot gets exactly slot + db (an add
// per row into the slot would round differently); no rows leave the slot as it is.
TEST(Linear, BiasBackwardAccumulatesItsSumIntoTheSlot) {
  std::vector<float> dy = {1, 0, 2, -1}, slot(2, 1.0f);
  biasBackwardAccumulate(dy.data(), slot.data(), 2, 2);
  EXPECT_EQ(slot, (std::vector<float>{4, 0}));
  biasBackwardAccumulate(dy.data(), slot.data(), 0, 2);
  EXPECT_EQ(slot, (std::vector<float>{4, 0}));

  const int64_t rows = 97, out = 130; // a partial column chunk of the threads' 64
  std::vector<float> values = randomTensor(rows * out, 44), start = randomTensor(out, 45);
  std::vector<float> sum(out), accumulated = start;
  biasBackward(values.data(), sum.data(), rows, out);
  biasBackwardAccumulate(values.data(), accumulated.data(), rows, out);
  for (int64_t o = 0; o < out; ++o)
    EXPECT_EQ(accumulated[o], start[o] + sum[o]) << "column " << o;
}

TEST(Linear, BackwardMatchesFiniteDifferences) {
  const int64_t rows = 4, in = 3, out = 5;
  std::vector<float> x = randomTensor(rows * in, 40), w = randomTensor(out * in, 41);
  std::vector<float> b = randomTensor(out, 42), dy = randomTensor(rows * out, 43);
  std::vector<float> dx(rows * in), dw(out * in), db(out);
  linearBackwardInput(dy.data(), w.data(), dx.data(), rows, in, out);
  linearBackwardWeight(dy.data(), x.data(), dw.data(), rows, in, out);
  biasBackward(dy.data(), db.data(), rows, out);
  auto forward = [&] {
    std::vector<float> y(rows * out);
    linearForward(x.data(), w.data(), b.data(), y.data(), rows, in, out);
    return y;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
  expectGradientNear(dw, numericGradient(w, dy, forward), "dw");
  expectGradientNear(db, numericGradient(b, dy, forward), "db");
}

// A bias-less linear's gradients are the same two GEMMs, checked against the forward
// without bias; sizes past one thread block (kGemmBlock, 128 rows) split the GEMMs.
TEST(Linear, BackwardWithoutBiasMatchesFiniteDifferences) {
  const int64_t rows = 130, in = 3, out = 4;
  std::vector<float> x = randomTensor(rows * in, 50), w = randomTensor(out * in, 51);
  std::vector<float> dy = randomTensor(rows * out, 52);
  std::vector<float> dx(rows * in), dw(out * in);
  linearBackwardInput(dy.data(), w.data(), dx.data(), rows, in, out);
  linearBackwardWeight(dy.data(), x.data(), dw.data(), rows, in, out);
  auto forward = [&] {
    std::vector<float> y(rows * out, 99.0f);
    linearForward(x.data(), w.data(), static_cast<const float *>(nullptr), y.data(), rows, in, out);
    return y;
  };
  expectGradientNear(dx, numericGradient(x, dy, forward), "dx");
  expectGradientNear(dw, numericGradient(w, dy, forward), "dw");
}
