// Tests of the weight quantization kernels (cpu_quantized_weight.h) against values derived by
// hand: bitsandbytes' NF4 thresholds, a block's codes read off them, a partial block and an odd
// count's padding, an all-zero block, ties at a threshold, the reciprocal bitsandbytes
// scales by, the double quantization of four absmaxes, the nested codes' tie rule on a map
// whose midpoints are exact, int8 rows with their rounding, and the layouts' byte counts.
// Dequantization of whole tensors is checked against the quantization's error bound.
#include "bertc/runtime/cpu_quantized_weight.h"
#include "bertc/runtime/quantized_weight.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace bertc;
using namespace bertc::cpu;

namespace {

/// The NF4 codes of x and its absmaxes, by quantizeNf4.
struct Nf4Codes {
  std::vector<uint8_t> packed;
  std::vector<float> absmax;
};

Nf4Codes quantize(const std::vector<float> &x) {
  const int64_t n = int64_t(x.size());
  Nf4Codes codes{std::vector<uint8_t>(nf4PackedBytes(n)), std::vector<float>(nf4Blocks(n))};
  quantizeNf4(x.data(), n, codes.packed.data(), codes.absmax.data());
  return codes;
}

/// A plain NF4 weight over `codes`, with bitsandbytes' map.
Nf4Weight plainWeight(const Nf4Codes &codes, int64_t n) {
  return {
      n,      codes.packed.data(), codes.absmax.data(), nullptr, nullptr, nullptr, kNf4Map.data(),
      nullptr};
}

} // namespace

// Each threshold is the exact midpoint of the NF4 values beside it rounded to fp32: the
// float nearest it, or for codes 0|1, 8|9, 12|13 and 14|15, where it lies halfway between
// two floats, the one bitsandbytes' 16-digit constant is nearer to (the bits nvcc 13 puts
// in dQuantizeNF4's PTX), one ulp from the fp32 (a + b) / 2 of its PyTorch backend. Each
// value is its own code.
TEST(QuantizedWeight, Nf4ThresholdsAreBitsandbytesConstants) {
  const uint32_t awayFromSum[] = {0xbf591cd9, 0x3df64863, 0x3f006d03, 0x3f5c89d9};
  int away = 0;
  for (int k = 0; k < 15; ++k) {
    const float t = nf4Threshold(k), sum = (nf4Value(k) + nf4Value(k + 1)) / 2.0f;
    const double exact = (double(nf4Value(k)) + double(nf4Value(k + 1))) / 2.0;
    const double halfUlp = (double(std::nextafter(t, 2.0f)) - double(t)) / 2.0;
    EXPECT_LE(std::fabs(double(t) - exact), halfUlp) << "threshold " << k;
    if (t != sum) {
      ASSERT_LT(away, 4) << "threshold " << k;
      EXPECT_EQ(floatBits(t), awayFromSum[away++]) << "threshold " << k;
      EXPECT_EQ(std::fabs(double(t) - exact), halfUlp) << "threshold " << k;
    }
    EXPECT_EQ(nf4Code(nf4Value(k)), k);
  }
  EXPECT_EQ(away, 4);
  EXPECT_EQ(nf4Code(1.0f), 15);
  EXPECT_EQ(nf4Code(std::numeric_limits<float>::quiet_NaN()), 0);
  // The fp32 sum between codes 14 and 15 lies above the GPU's threshold: code 15.
  EXPECT_EQ(nf4Code((nf4Value(14) + nf4Value(15)) / 2.0f), 15);
}

// A value exactly at a threshold keeps the lower code; the next float up takes the upper.
TEST(QuantizedWeight, Nf4TieAtThresholdGoesDown) {
  for (int k = 0; k < 15; ++k) {
    const float t = nf4Threshold(k);
    const Nf4Codes codes = quantize({1.0f, t, std::nextafter(t, 2.0f), 0.0f});
    // absmax 1: the scale is exactly 1 and the scaled values are the inputs.
    EXPECT_EQ(codes.packed[0], packNf4(15, uint8_t(k))) << "threshold " << k;
    EXPECT_EQ(codes.packed[1], packNf4(uint8_t(k + 1), 7)) << "threshold " << k;
  }
}

// Eight values, one partial block: absmax 2, scale 0.5, scaled values and the thresholds
// they lie between:
//   2 -> 1 (above 0.8615): 15        -1 -> -0.5 (-0.6106, -0.4600]: 2
//   0.5 -> 0.25 (0.2035, 0.2920]: 10  0 -> 0 (-0.0455, 0.0398]: 7
//   -2 -> -1 (at most -0.8481): 0     1.2 -> 0.6 (0.5017, 0.6428]: 13
//   0.1 -> 0.05 (0.0398, 0.1203]: 8   -0.3 -> -0.15 (-0.2346, -0.1379]: 5
// Dequantized, each is its code's value times 2 (exact).
TEST(QuantizedWeight, HandComputedNf4Block) {
  const std::vector<float> x = {2.0f, -1.0f, 0.5f, 0.0f, -2.0f, 1.2f, 0.1f, -0.3f};
  const Nf4Codes codes = quantize(x);
  EXPECT_EQ(codes.packed, (std::vector<uint8_t>{0xF2, 0xA7, 0x0D, 0x85}));
  EXPECT_EQ(codes.absmax, std::vector<float>{2.0f});

  std::vector<float> out(8);
  dequantizeNf4(plainWeight(codes, 8), out.data());
  const int expectedCodes[] = {15, 2, 10, 7, 0, 13, 8, 5};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(out[i], nf4Value(expectedCodes[i]) * 2.0f) << "value " << i;
  std::vector<bf16> out16(8);
  dequantizeNf4(plainWeight(codes, 8), out16.data());
  EXPECT_EQ(out16[1].bits, toBf16(-0.5250730514526367f * 2.0f).bits);
}

// bitsandbytes multiplies by the absmax's reciprocal: with absmax 3, 0.11937045 * fl(1/3)
// = 0.039790154 lies above threshold 7 (0.039790150), where 0.11937045 / 3 would be on it.
TEST(QuantizedWeight, Nf4ScalesByTheReciprocal) {
  const float x = 0.11937045305967331f;
  ASSERT_EQ(x / 3.0f, nf4Threshold(7));
  ASSERT_GT(x * (1.0f / 3.0f), nf4Threshold(7));
  EXPECT_EQ(quantize({3.0f, x}).packed[0], packNf4(15, 8));
}

// 65 values: a full block, then one value of -3 alone (absmax 3, scaled -1: code 0), whose
// unused low nibble is the code of a 0 (7). A block of zeros has absmax 0 and NaN scaled
// values: code 0, read back as -1 * 0 = -0.
TEST(QuantizedWeight, PartialBlockPaddingAndZeroBlock) {
  std::vector<float> x(65, 0.5f);
  x[64] = -3.0f;
  const Nf4Codes odd = quantize(x);
  EXPECT_EQ(odd.absmax, (std::vector<float>{0.5f, 3.0f}));
  EXPECT_EQ(odd.packed[31], 0xFF);
  EXPECT_EQ(odd.packed[32], 0x07);

  const Nf4Codes zeros = quantize(std::vector<float>(64, 0.0f));
  EXPECT_EQ(zeros.absmax, std::vector<float>{0.0f});
  EXPECT_EQ(zeros.packed, std::vector<uint8_t>(32, 0x00));
  std::vector<float> out(64, 1.0f);
  dequantizeNf4(plainWeight(zeros, 64), out.data());
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_TRUE(std::signbit(out[0]));
}

// Four absmaxes, mean 0.3125 (exact), less the mean [0.1875, -0.0625, -0.1875, 0.0625],
// nested absmax 0.1875, scaled [1, -1/3, -1, 1/3]. In the signed map, decade 6's part j is
// (137 + 18j) / 1280 at code 128 + 63 + j, and code c < 127 is minus code 254 - c:
//   1 -> code 255;  -1 -> -1271/1280, the lowest value, code 0;
//   1/3 -> 425/1280 = 0.33203 (j 16; 443/1280 = 0.34609 farther), code 207;  -1/3 -> 47.
// Read back: 1 * 0.1875 + 0.3125 = 0.5; -(425/1280) * 0.1875 + 0.3125 = 0.250244140625
// (exact); -(1271/1280) * 0.1875 + 0.3125 = 0.1263184; (425/1280) * 0.1875 + 0.3125 =
// 0.374755859375 (exact).
TEST(QuantizedWeight, HandComputedDoubleQuantization) {
  const std::vector<float> absmax = {0.5f, 0.25f, 0.125f, 0.375f};
  const float mean = nf4AbsmaxMean(absmax.data(), 4);
  EXPECT_EQ(mean, 0.3125f);
  std::vector<uint8_t> codes(4);
  float nestedAbsmax = 0.0f;
  quantizeNf4Absmax(absmax.data(), 4, mean, kDefaultNestedMap.data(), codes.data(), &nestedAbsmax);
  EXPECT_EQ(codes, (std::vector<uint8_t>{255, 47, 0, 207}));
  EXPECT_EQ(nestedAbsmax, 0.1875f);

  // One value of 1 in each block of 64: dequantized, it is its block's absmax.
  std::vector<uint8_t> packed(128, packNf4(15, 7));
  const Nf4Weight weight{256,           packed.data(), nullptr,        codes.data(),
                         &nestedAbsmax, &mean,         kNf4Map.data(), kDefaultNestedMap.data()};
  std::vector<float> out(256);
  dequantizeNf4(weight, out.data());
  EXPECT_EQ(out[0], 0.5f);
  EXPECT_EQ(out[64], 0.250244140625f);
  EXPECT_NEAR(out[128], 0.3125 - 1271.0 / 1280.0 * 0.1875, 1e-7);
  EXPECT_EQ(out[192], 0.374755859375f);
  EXPECT_EQ(out[1], 0.0f);
}

// On the map of the integers -127..128, whose midpoints are exact, blockwiseCode gives the
// nearest value, a tie between two codes going to the even one, and NaN code 0.
TEST(QuantizedWeight, BlockwiseCodeTiesGoToTheEvenCode) {
  float map[256];
  for (int code = 0; code < 256; ++code)
    map[code] = float(code - 127);
  EXPECT_EQ(blockwiseCode(map, 0.5f), 128);  // between codes 127 and 128
  EXPECT_EQ(blockwiseCode(map, 1.5f), 128);  // between 128 and 129
  EXPECT_EQ(blockwiseCode(map, -0.5f), 126); // between 126 and 127
  EXPECT_EQ(blockwiseCode(map, 127.5f), 254);
  EXPECT_EQ(blockwiseCode(map, 500.0f), 255);
  EXPECT_EQ(blockwiseCode(map, -500.0f), 0);
  EXPECT_EQ(blockwiseCode(map, std::numeric_limits<float>::quiet_NaN()), 0);
  std::mt19937 generator(5);
  std::uniform_real_distribution<float> uniform(-130.0f, 130.0f);
  for (int i = 0; i < 2000; ++i) {
    const float x = uniform(generator);
    const float nearest = std::fmin(128.0f, std::fmax(-127.0f, std::nearbyint(x)));
    if (std::fabs(x - std::trunc(x)) != 0.5f) {
      EXPECT_EQ(blockwiseCode(map, x), int(nearest) + 127) << x;
    }
  }
}

// Rows of absmax 2 (scale fl(1/2) * 127 = 63.5) and 127 (fl(1/127) * 127 rounds to 1), and a
// row of zeros: 1 -> 63.5 -> 64 (half to even), -0.5 -> -31.75 -> -32, 0.25 -> 15.875 ->
// 16, 2 -> 127; 2.5 -> 2, 3.5 -> 4, -2.5 -> -2. Read back: q * (2 * fl(1/127)), exact
// multiples of fl(1/127) here.
TEST(QuantizedWeight, HandComputedInt8Rows) {
  const std::vector<float> x = {1.0f, -0.5f, 0.25f, 2.0f, 127.0f, 2.5f,
                                3.5f, -2.5f, 0.0f,  0.0f, 0.0f,   0.0f};
  std::vector<int8_t> q(12);
  std::vector<float> absmax(3);
  quantizeInt8Rows(x.data(), 3, 4, q.data(), absmax.data());
  EXPECT_EQ(q, (std::vector<int8_t>{64, -32, 16, 127, 127, 2, 4, -2, 0, 0, 0, 0}));
  EXPECT_EQ(absmax, (std::vector<float>{2.0f, 127.0f, 0.0f}));

  std::vector<float> out(12);
  dequantizeInt8Rows(q.data(), absmax.data(), out.data(), 3, 4);
  const float inverse127 = 1.0f / 127.0f;
  EXPECT_EQ(out[0], 128.0f * inverse127);
  EXPECT_EQ(out[1], -64.0f * inverse127);
  EXPECT_EQ(out[3], 254.0f * inverse127);
  EXPECT_EQ(out[5], 2.0f * (127.0f * inverse127));
  EXPECT_EQ(out[8], 0.0f);
  std::vector<fp16> out16(12);
  dequantizeInt8Rows(q.data(), absmax.data(), out16.data(), 3, 4);
  EXPECT_EQ(out16[2].bits, toFp16(32.0f * inverse127).bits);
}

// The layouts' parts and sizes (abi/quantized_weight_layout.h's table, and 65 values:
// 33 packed bytes, 2 blocks, 1 nested block; 3 x 5 int8s).
TEST(QuantizedWeight, LayoutBytes) {
  const int64_t big = 4096 * 4096;
  EXPECT_EQ(nf4Layout(big, false).bytes, 9437248);
  EXPECT_EQ(nf4Layout(big, true).bytes, 8655952);
  EXPECT_EQ(int8RowsLayout(4096, 4096).bytes, 16793600);

  const Nf4Layout plain = nf4Layout(65, false);
  EXPECT_EQ(plain.absmaxOffset, 48);   // 33 rounded up to 16
  EXPECT_EQ(plain.quantMapOffset, 64); // 48 + 8, rounded up
  EXPECT_EQ(plain.bytes, 128);
  EXPECT_EQ(plain.nestedMapOffset, -1);
  const Nf4Layout nested = nf4Layout(65, true);
  EXPECT_EQ(nested.absmaxOffset, 48);
  EXPECT_EQ(nested.nestedAbsmaxOffset, 64); // 48 + 2 codes
  EXPECT_EQ(nested.absmaxMeanOffset, 80);   // 64 + 4
  EXPECT_EQ(nested.quantMapOffset, 96);     // 80 + 4
  EXPECT_EQ(nested.nestedMapOffset, 160);   // 96 + 64
  EXPECT_EQ(nested.bytes, 1184);            // 160 + 1024
  const Int8RowsLayout rows = int8RowsLayout(3, 5);
  EXPECT_EQ(rows.absmaxOffset, 16);
  EXPECT_EQ(rows.bytes, 32);
}

// A normal weight of 3 * 16384 + 77 values (several chunks of the threads' loop and a
// partial last block) through quantizeNf4Weight and dequantizeNf4, both forms: the codes
// are those quantizeNf4 gives, and each value lies within half the widest gap between NF4
// values (0.152 of its block's absmax) of the original; with double quantization within
// 0.16, the absmax's own error (under 1%) added.
TEST(QuantizedWeight, WholeTensorRoundTrip) {
  const int64_t n = 3 * 16384 + 77;
  std::mt19937 generator(11);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> x(n);
  for (float &value : x)
    value = normal(generator);
  const Nf4Codes codes = quantize(x);
  std::vector<float> scratch(nf4Blocks(n));
  for (bool nested : {false, true}) {
    const Nf4Layout layout = nf4Layout(n, nested);
    std::vector<unsigned char> bytes(layout.bytes);
    quantizeNf4Weight(x.data(), layout, bytes.data(), nested ? scratch.data() : nullptr);
    EXPECT_EQ(std::memcmp(bytes.data(), codes.packed.data(), codes.packed.size()), 0);
    std::vector<float> out(n);
    dequantizeNf4(nf4WeightAt(bytes.data(), layout), out.data());
    for (int64_t i = 0; i < n; ++i) {
      const float absmax = codes.absmax[i / kNf4BlockSize];
      ASSERT_LE(std::fabs(out[i] - x[i]), (nested ? 0.16f : 0.1521f) * absmax) << i;
    }
  }
}
