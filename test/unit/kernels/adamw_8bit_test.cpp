// Tests of adamw8bitUpdate (bitsandbytes' Adam8bit, blockwise): one block worked out by hand
// for two steps from the closed-form maps (dynamic_map.h's definition: part j of decade i of
// [0.1, 1] has the midpoint 10^(i-6) (0.1 + 0.9 (j + 0.5) / n_i)), codes and absmaxes exact;
// the state's bytes; the all-zero block; blocks independent of each other; and a few hundred
// steps on a quadratic, where the 8-bit state tracks fp32 AdamW.
#include "bertc/runtime/cpu_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace bertc;
using namespace bertc::cpu;

namespace {

/// One parameter with 8-bit AdamW state, initially zero.
struct Parameter8bit {
  std::vector<float> param;
  QuantBlockSize blockSize;
  std::vector<uint8_t> mCodes, vCodes;
  std::vector<float> mAbsmax, vAbsmax;

  Parameter8bit(std::vector<float> initial, QuantBlockSize blockSize)
      : param(std::move(initial)), blockSize(blockSize), mCodes(param.size()), vCodes(param.size()),
        mAbsmax(quantBlockCount(int64_t(param.size()), blockSize)), vAbsmax(mAbsmax.size()) {}

  AdamW8bitState state() { return {mCodes.data(), vCodes.data(), mAbsmax.data(), vAbsmax.data()}; }

  void step(const std::vector<float> &grad, const AdamWConfig &config) {
    adamw8bitUpdate(param.data(), grad.data(), state(), int64_t(param.size()), blockSize, config);
  }
};

/// lr 0.1, betas (0.5, 0.75), eps 1e-8, weight decay 0.5 (decay factor 0.95): moments and
/// bias corrections stay exact in fp32 (1 - b1^t = 0.5, 0.75; 1 - b2^t = 0.25, 0.4375).
AdamWConfig handConfig(int64_t step) { return {0.1, 0.5, 0.75, 1e-8, 0.5, step}; }

} // namespace

// Two codes a value and two absmaxes a block (abi/adamw_8bit_state.h's table):
// 768 x 3072 = 2,359,296 values are 1152 blocks of 2048, 9216 of 256; 4097 values 3 and 17.
TEST(AdamW8bit, StateBytes) {
  EXPECT_EQ(adamw8bitStateBytes(768 * 3072, QuantBlockSize::k2048), 2 * 2359296 + 8 * 1152);
  EXPECT_EQ(adamw8bitStateBytes(768 * 3072, QuantBlockSize::k256), 2 * 2359296 + 8 * 9216);
  EXPECT_EQ(adamw8bitStateBytes(4097, QuantBlockSize::k2048), 8194 + 8 * 3);
  EXPECT_EQ(adamw8bitStateBytes(4097, QuantBlockSize::k256), 8194 + 8 * 17);
  EXPECT_EQ(quantBlockCount(4096, QuantBlockSize::k2048), 2);
}

// Four values in one partial block of 256. Signed decade-6 values are (137 + 18j) / 1280,
// decade 5 (73 + 18j) / 6400; unsigned decade 6 (265 + 18j) / 2560, decade 5
// (137 + 18j) / 12800, decade 4 (73 + 18j) / 64000. Positive rank r is code 128 + r
// signed (decade i from rank 2^i - 1; code c < 127 is -(code 254 - c)) and 1 + r unsigned
// (decade i from rank 2^(i+1) - 2).
//
// Step 1, g = [1, -0.5, 0.25, 0.0625] from the zero state: m = g / 2 = [0.5, -0.25, 0.125,
// 0.03125], v = g^2 / 4 = [0.25, 0.0625, 0.015625, 0.0009765625]; absmaxes 0.5 and 0.25.
//   m / 0.5 = 1       -> code 255
//           = -0.5    -> -641/1280 = -0.50078 (j 28; 623/1280 farther), rank 91, code 35
//           = 0.25    -> 317/1280 = 0.24766 (j 10; 335/1280 farther), rank 73, code 201
//           = 0.0625  -> 397/6400 = 0.06203 (j 18; 415/6400 farther), rank 49, code 177
//   v / 0.25 = 1      -> code 255
//            = 0.25   -> 643/2560 = 0.25117 (j 21; 625/2560 farther), rank 147, code 148
//            = 0.0625 -> 803/12800 = 0.06273 (j 37; 785/12800 farther), rank 99, code 100
//            = 0.0039 -> 253/64000 = 0.00395 (j 10; 235/64000 farther), rank 40, code 41
//   p = 0.95 - 0.1 g / (|g| + 1e-8) = 0.85 for p[0], as fp32 AdamW from zero moments.
//
// Step 2, g = [-1, 0.5, 0, 0.125], from the dequantized m = [0.5, -641/2560, 317/2560,
// 397/12800] and v = [0.25, 643/10240, 803/51200, 253/256000]:
//   m = (m + g) / 2 = [-0.25, 0.124805, 0.061914, 0.078008]; absmax 0.25;
//   m / 0.25 = -1       -> -1271/1280, the lowest value, code 0
//            = 0.499219 -> 641/1280 (623/1280 farther), code 219
//            = 0.247656 -> 317/1280, code 201
//            = 0.312031 -> 407/1280 = 0.31797 (j 15; 389/1280 = 0.30391 farther), code 206
//   v = 3/4 v + g^2 / 4 = [0.4375, 0.109595, 0.011763, 0.004647]; absmax 0.4375;
//   v / 0.4375 = 1        -> code 255
//              = 0.250502 -> 643/2560 (625/2560 farther), code 148
//              = 0.026886 -> 353/12800 = 0.027578 (distance 0.000692; 335/12800 = 0.026172 at
//                            0.000714), rank 74, code 75
//              = 0.010623 -> 137/12800 = 0.010703 (decade 5's first; decade 4's last,
//                            631/64000 = 0.009859, farther), rank 62, code 63
//   p[0] = 0.95 * 0.85 - (0.1 / 0.75) (-0.25) / (sqrt(0.4375) / sqrt(0.4375) + 1e-8)
//        = 0.8075 + 0.0333333 = 0.8408333
TEST(AdamW8bit, HandComputedBlock) {
  Parameter8bit p({1.0f, 1.0f, 1.0f, 1.0f}, QuantBlockSize::k256);
  const std::vector<float> grad1 = {1.0f, -0.5f, 0.25f, 0.0625f};
  p.step(grad1, handConfig(1));
  EXPECT_EQ(p.mCodes, (std::vector<uint8_t>{255, 35, 201, 177}));
  EXPECT_EQ(p.vCodes, (std::vector<uint8_t>{255, 148, 100, 41}));
  EXPECT_EQ(p.mAbsmax[0], 0.5f);
  EXPECT_EQ(p.vAbsmax[0], 0.25f);
  std::vector<float> fp32Param = {1.0f, 1.0f, 1.0f, 1.0f}, m(4, 0.0f), v(4, 0.0f);
  adamwUpdate(fp32Param.data(), grad1.data(), m.data(), v.data(), 4, handConfig(1));
  EXPECT_EQ(p.param, fp32Param);
  EXPECT_NEAR(p.param[0], 0.85, 1e-7);

  p.step({-1.0f, 0.5f, 0.0f, 0.125f}, handConfig(2));
  EXPECT_EQ(p.mCodes, (std::vector<uint8_t>{0, 219, 201, 206}));
  EXPECT_EQ(p.vCodes, (std::vector<uint8_t>{255, 148, 75, 63}));
  EXPECT_EQ(p.mAbsmax[0], 0.25f);
  EXPECT_EQ(p.vAbsmax[0], 0.4375f);
  EXPECT_NEAR(p.param[0], 0.8408333, 1e-6);
}

// A zero gradient on the zero state keeps both moments zero: absmax 0, every m the signed
// map's zero code and every v the unsigned one's, the parameter only decayed.
TEST(AdamW8bit, ZeroBlockStaysZero) {
  Parameter8bit p(std::vector<float>(300, 2.0f), QuantBlockSize::k256);
  p.step(std::vector<float>(300, 0.0f), handConfig(1));
  EXPECT_EQ(p.mAbsmax, std::vector<float>(2, 0.0f));
  EXPECT_EQ(p.vAbsmax, std::vector<float>(2, 0.0f));
  EXPECT_EQ(p.mCodes, std::vector<uint8_t>(300, 127));
  EXPECT_EQ(p.vCodes, std::vector<uint8_t>(300, 0));
  EXPECT_EQ(p.param, std::vector<float>(300, 2.0f * 0.95f));
}

// Each block is quantized on its own: a parameter of two full blocks and a partial one gives
// the same state as the three blocks updated as separate parameters.
TEST(AdamW8bit, BlocksAreIndependent) {
  for (QuantBlockSize blockSize : {QuantBlockSize::k256, QuantBlockSize::k2048}) {
    const int64_t size = int64_t(blockSize), n = 2 * size + 37;
    std::mt19937 generator(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> initial(n);
    for (float &value : initial)
      value = normal(generator);
    Parameter8bit whole(initial, blockSize);
    std::vector<Parameter8bit> pieces;
    for (int64_t begin = 0; begin < n; begin += size)
      pieces.emplace_back(
          std::vector<float>(initial.begin() + begin, initial.begin() + std::min(n, begin + size)),
          blockSize);
    for (int64_t step = 1; step <= 3; ++step) {
      std::vector<float> grad(n);
      for (int64_t i = 0; i < n; ++i) // blocks of different scales
        grad[i] = normal(generator) * std::pow(10.0f, float(i / size) - 2.0f);
      whole.step(grad, {1e-3, 0.9, 0.999, 1e-8, 0.01, step});
      for (size_t b = 0; b < pieces.size(); ++b)
        pieces[b].step(
            std::vector<float>(grad.begin() + int64_t(b) * size,
                               grad.begin() + int64_t(b) * size + int64_t(pieces[b].param.size())),
            {1e-3, 0.9, 0.999, 1e-8, 0.01, step});
    }
    for (size_t b = 0; b < pieces.size(); ++b) {
      const int64_t begin = int64_t(b) * size, count = int64_t(pieces[b].param.size());
      EXPECT_EQ(
          std::vector<float>(whole.param.begin() + begin, whole.param.begin() + begin + count),
          pieces[b].param);
      EXPECT_EQ(
          std::vector<uint8_t>(whole.mCodes.begin() + begin, whole.mCodes.begin() + begin + count),
          pieces[b].mCodes);
      EXPECT_EQ(
          std::vector<uint8_t>(whole.vCodes.begin() + begin, whole.vCodes.begin() + begin + count),
          pieces[b].vCodes);
      EXPECT_EQ(whole.mAbsmax[b], pieces[b].mAbsmax[0]);
      EXPECT_EQ(whole.vAbsmax[b], pieces[b].vAbsmax[0]);
    }
  }
}

// A 16-bit parameter's working copy (one element into its array) gets the bits convert
// gives after the update, block by block, and its neighbours keep theirs; the master and the
// state are those of the update without it. Two full blocks of 2048 and a partial one.
TEST(AdamW8bit, WorkingCopyGetsTheBitsOfConvertAfterTheUpdate) {
  const int64_t n = 2 * 2048 + 300;
  std::mt19937 generator(9);
  std::uniform_real_distribution<float> values(-1.0f, 1.0f);
  std::vector<float> initial(n);
  for (float &x : initial)
    x = values(generator);
  Parameter8bit plain(initial, QuantBlockSize::k2048), withCopy(initial, QuantBlockSize::k2048);
  std::vector<bf16> working(n + 2, fromFloat<bf16>(42.0f)), expected = working;
  for (int64_t step = 1; step <= 2; ++step) {
    std::vector<float> grad(n);
    for (float &g : grad)
      g = 0.1f * values(generator);
    const AdamWConfig config{1e-3, 0.9, 0.999, 1e-8, 0.01, step};
    plain.step(grad, config);
    convert(plain.param.data(), expected.data() + 1, n);
    adamw8bitUpdate(withCopy.param.data(), grad.data(), withCopy.state(), working.data() + 1, n,
                    QuantBlockSize::k2048, config);
  }
  EXPECT_EQ(withCopy.param, plain.param);
  EXPECT_EQ(withCopy.mCodes, plain.mCodes);
  EXPECT_EQ(withCopy.vCodes, plain.vCodes);
  EXPECT_EQ(withCopy.mAbsmax, plain.mAbsmax);
  EXPECT_EQ(withCopy.vAbsmax, plain.vAbsmax);
  EXPECT_EQ(std::memcmp(working.data(), expected.data(), working.size() * sizeof(bf16)), 0);
}

namespace {

/// f(x) = 1/2 sum a_i (x_i - t_i)^2 over n values (a_i in [0.5, 2], t_i in [-1, 1]), with
/// gradient a (x - t) plus noise of scale 0.1 (the same draws for every optimizer run).
struct Quadratic {
  std::vector<float> a, t;
  std::mt19937 noiseGenerator{11};

  explicit Quadratic(int64_t n) : a(n), t(n) {
    std::mt19937 generator(5);
    std::uniform_real_distribution<float> curvature(0.5f, 2.0f), target(-1.0f, 1.0f);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = curvature(generator);
      t[i] = target(generator);
    }
  }
  double loss(const std::vector<float> &x) const {
    double sum = 0.0;
    for (size_t i = 0; i < x.size(); ++i)
      sum += 0.5 * a[i] * (double(x[i]) - t[i]) * (double(x[i]) - t[i]);
    return sum;
  }
  std::vector<float> gradient(const std::vector<float> &x) {
    std::normal_distribution<float> noise(0.0f, 0.1f);
    std::vector<float> g(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      g[i] = a[i] * (x[i] - t[i]) + noise(noiseGenerator);
    return g;
  }
};

} // namespace

// 300 steps of lr 1e-2 (betas 0.9, 0.999, weight decay 0.01) from x = 0 on a quadratic of
// 3 * 2048 + 500 values, 8-bit state (both block sizes) beside fp32 state, each on its own
// gradients (the same noise draws). Measured: the loss falls from 1388.5 to 1.020 (fp32)
// and 1.225 / 1.219 (8-bit, blocks of 256 / 2048), and the 8-bit parameters stay within
// 1.7% of fp32's (||x8 - x32|| / ||x32||, worst over the steps). Asserted: within 3%, and a
// final loss within 1.5 times fp32's, itself below 1e-3 of the initial one.
TEST(AdamW8bit, TracksFp32AdamWOnAQuadratic) {
  const int64_t n = 3 * 2048 + 500, steps = 300;
  for (QuantBlockSize blockSize : {QuantBlockSize::k256, QuantBlockSize::k2048}) {
    SCOPED_TRACE("block size " + std::to_string(int(blockSize)));
    Quadratic fp32Problem(n), quantizedProblem(n);
    std::vector<float> x(n, 0.0f), m(n, 0.0f), v(n, 0.0f);
    Parameter8bit quantized(std::vector<float>(n, 0.0f), blockSize);
    const double initialLoss = fp32Problem.loss(x);
    double worstDistance = 0.0;
    for (int64_t step = 1; step <= steps; ++step) {
      const AdamWConfig config{1e-2, 0.9, 0.999, 1e-8, 0.01, step};
      const std::vector<float> g = fp32Problem.gradient(x);
      adamwUpdate(x.data(), g.data(), m.data(), v.data(), n, config);
      quantized.step(quantizedProblem.gradient(quantized.param), config);
      double distance = 0.0, norm = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        distance += (double(quantized.param[i]) - x[i]) * (double(quantized.param[i]) - x[i]);
        norm += double(x[i]) * x[i];
      }
      worstDistance = std::max(worstDistance, std::sqrt(distance / norm));
    }
    const double fp32Loss = fp32Problem.loss(x);
    EXPECT_LT(fp32Loss, 1e-3 * initialLoss);
    EXPECT_LT(quantizedProblem.loss(quantized.param), 1.5 * fp32Loss);
    EXPECT_LT(worstDistance, 0.03);
  }
}
