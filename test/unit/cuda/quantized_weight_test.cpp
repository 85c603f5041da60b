// The CUDA weight dequantizers against their CPU twins, bit for bit, into fp32, bf16 and
// fp16: NF4 with and without double quantization and int8 rows, over counts that are not
// multiples of a group, an NF4 block or a nested block (1 value, one row, an odd count, several
// nested blocks and a partial one), with outputs at offsets that rule out vector stores.
// The codes are random bytes, so every 4-bit code and every absmax code occurs, and the maps
// are bitsandbytes' scaled by 1.001 (a file's own maps), so a kernel that read any map but
// the one it is given, or missed an entry when copying it to shared memory, would differ.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_quantized_weight.h"
#include "bertc/runtime/cuda_quantized_weight.h"
#include "bertc/runtime/quantized_weight.h"

namespace bertc::cuda::test {
namespace {

template <typename T> class QuantizedWeightTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(QuantizedWeightTest, StorageTypes, StorageTypeNames);

std::vector<uint8_t> randomBytes(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> bytes(count);
  for (uint8_t &value : bytes)
    value = uint8_t(byte(generator));
  return bytes;
}

/// An NF4 tensor of n values in its layout's bytes: random codes, absmaxes (or absmax codes,
/// nested absmaxes and a mean) and bitsandbytes' maps scaled by 1.001.
std::vector<uint8_t> randomNf4Tensor(const Nf4Layout &layout, uint32_t seed) {
  std::vector<uint8_t> bytes = randomBytes(layout.bytes, seed);
  auto fill = [&](int64_t offset, const std::vector<float> &values) {
    std::memcpy(bytes.data() + offset, values.data(), values.size() * sizeof(float));
  };
  const int64_t blocks = nf4Blocks(layout.values);
  std::vector<float> quantMap(kNf4Map.begin(), kNf4Map.end());
  for (float &value : quantMap)
    value *= 1.001f;
  fill(layout.quantMapOffset, quantMap);
  if (!layout.nested) {
    fill(layout.absmaxOffset, randomValues<float>(blocks, seed + 1, 0.0f, 0.1f));
    return bytes;
  }
  std::vector<float> nestedMap(kDefaultNestedMap.begin(), kDefaultNestedMap.end());
  for (float &value : nestedMap)
    value *= 1.001f;
  fill(layout.nestedMapOffset, nestedMap);
  fill(layout.nestedAbsmaxOffset,
       randomValues<float>(nf4NestedBlocks(layout.values), seed + 2, 0.0f, 0.05f));
  fill(layout.absmaxMeanOffset, {0.0371f});
  return bytes;
}

/// The NF4 tensor of n values dequantized on the device and on the CPU; the device output
/// starts `outOffset` values into its array.
template <typename T> void expectNf4TwinsAgree(int64_t n, bool nested, int64_t outOffset) {
  const Nf4Layout layout = nf4Layout(n, nested);
  const std::vector<uint8_t> bytes = randomNf4Tensor(layout, uint32_t(n) + (nested ? 7 : 0));
  std::vector<T> expected(n);
  cpu::dequantizeNf4(nf4WeightAt(bytes.data(), layout), expected.data());

  DeviceArray<uint8_t> dBytes(bytes);
  DeviceArray<T> dOut(outOffset + n);
  cuda::dequantizeNf4(nf4WeightAt(dBytes.get(), layout), dOut.get() + outOffset, nullptr);
  const std::vector<T> out = dOut.download();
  const std::string what = std::string(nested ? "nested" : "plain") +
                           " NF4, n = " + std::to_string(n) + " at +" + std::to_string(outOffset);
  expectBitIdentical(std::vector<T>(out.begin() + outOffset, out.end()), expected, what);
}

// Both forms, from a single value to 3 nested blocks and a partial one (3 * 256 * 64 + 333
// values), each output aligned and one value off alignment.
TYPED_TEST(QuantizedWeightTest, Nf4MatchesCpuBitForBit) {
  for (bool nested : {false, true})
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(64), int64_t(65), int64_t(1000),
                      int64_t(3 * 256 * 64 + 333)})
      for (int64_t outOffset : {0, 1})
        expectNf4TwinsAgree<TypeParam>(n, nested, outOffset);
}

// Packed codes that do not start on an 8-byte boundary (a weight read in place from a
// file's buffer) are loaded byte by byte, to the same values.
TYPED_TEST(QuantizedWeightTest, Nf4FromUnalignedCodes) {
  using T = TypeParam;
  const int64_t n = 333;
  const Nf4Layout layout = nf4Layout(n, false);
  const std::vector<uint8_t> bytes = randomNf4Tensor(layout, 21);
  std::vector<T> expected(n);
  cpu::dequantizeNf4(nf4WeightAt(bytes.data(), layout), expected.data());

  std::vector<uint8_t> shifted(1);
  shifted.insert(shifted.end(), bytes.begin(), bytes.begin() + nf4PackedBytes(n));
  DeviceArray<uint8_t> dBytes(bytes), dShifted(shifted);
  DeviceArray<T> dOut(n);
  Nf4Weight weight = nf4WeightAt(dBytes.get(), layout);
  weight.packed = dShifted.get() + 1;
  cuda::dequantizeNf4(weight, dOut.get(), nullptr);
  expectBitIdentical(dOut.download(), expected, "NF4 from codes at an odd address");
}

// Int8 rows: one value, one row of 17, rows shorter and longer than a group of 16 whose
// starts fall on and off 16-byte boundaries, and 64 rows of 100, into outputs aligned and
// one value off.
TYPED_TEST(QuantizedWeightTest, Int8RowsMatchCpuBitForBit) {
  using T = TypeParam;
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {1, 17}, {3, 5}, {7, 33}, {64, 100}};
  for (const auto &[rows, cols] : shapes) {
    for (int64_t outOffset : {0, 1}) {
      const std::vector<uint8_t> bytes = randomBytes(rows * cols, uint32_t(rows * cols));
      std::vector<int8_t> q(bytes.size());
      std::memcpy(q.data(), bytes.data(), bytes.size());
      const std::vector<float> absmax = randomValues<float>(rows, 3, 0.0f, 2.0f);
      std::vector<T> expected(rows * cols);
      cpu::dequantizeInt8Rows(q.data(), absmax.data(), expected.data(), rows, cols);

      DeviceArray<int8_t> dQ(q);
      DeviceArray<float> dAbsmax(absmax);
      DeviceArray<T> dOut(outOffset + rows * cols);
      cuda::dequantizeInt8Rows(dQ.get(), dAbsmax.get(), dOut.get() + outOffset, rows, cols,
                               nullptr);
      const std::vector<T> out = dOut.download();
      expectBitIdentical(std::vector<T>(out.begin() + outOffset, out.end()), expected,
                         "int8 rows " + std::to_string(rows) + " x " + std::to_string(cols) +
                             " at +" + std::to_string(outOffset));
    }
  }
}

} // namespace
} // namespace bertc::cuda::test
