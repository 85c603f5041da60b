// safetensors: bitwise round trip (F32, and U8 for 8-bit optimizer state), a file assembled
// byte by byte (F32, BF16 and F16 values converted by hand), and the errors a user meets
// with a bad checkpoint, each of which must name the file and the tensor.
#include "bertc/runtime/safetensors.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// IEEE binary16 bits of a small non-negative integer (exact below 2048): rebias the fp32
/// exponent (127 -> 15) and keep the top 10 mantissa bits.
uint16_t halfBitsOf(int value) {
  if (value == 0)
    return 0;
  uint32_t bits = bitsOf(float(value));
  return uint16_t(((((bits >> 23) & 0xFF) - 112) << 10) | ((bits >> 13) & 0x3FF));
}

/// A safetensors file from a header text and raw data bytes.
std::string assemble(const std::string &header, const std::string &data) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = char((uint64_t(header.size()) >> (8 * i)) & 0xFF);
  return bytes + header + data;
}

/// A valid one-tensor file: "w", F32 [2,3], values 0..5.
std::string writeSmallFile(const ScratchDir &dir) {
  std::string path = dir.file("small.safetensors");
  float values[6] = {0, 1, 2, 3, 4, 5};
  writeSafetensors(path, {{"w", {2, 3}, values}});
  return path;
}

TEST(Safetensors, RoundTripIsBitwise) {
  ScratchDir dir;
  std::string path = dir.file("round.safetensors");
  float matrix[6] = {1.5f,
                     -0.0f,
                     std::numeric_limits<float>::denorm_min(),
                     std::numeric_limits<float>::infinity(),
                     3.14159274f,
                     -1e-30f};
  uint32_t nanBits = 0x7FC01234u; // a NaN with a payload must survive too
  std::memcpy(&matrix[5], &nanBits, sizeof nanBits);
  float vector[4] = {0.1f, 0.2f, 0.3f, 0.4f};
  float scalar = 42.0f;
  writeSafetensors(path,
                   {{"bert.pooler.dense.weight", {2, 3}, matrix},
                    {"classifier.bias", {4}, vector},
                    {"scale", {}, &scalar}},
                   {{"format", "pt"}});
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  SafetensorsReader reader(path);
  EXPECT_EQ(reader.entries().size(), 3u);
  EXPECT_EQ(reader.metadata().at("format"), "pt");
  float matrixBack[6], vectorBack[4], scalarBack;
  reader.readF32("bert.pooler.dense.weight", {2, 3}, matrixBack);
  reader.readF32("classifier.bias", {4}, vectorBack);
  reader.readF32("scale", {}, &scalarBack);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(bitsOf(matrixBack[i]), bitsOf(matrix[i])) << "element " << i;
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(bitsOf(vectorBack[i]), bitsOf(vector[i])) << "element " << i;
  EXPECT_EQ(bitsOf(scalarBack), bitsOf(scalar));
}

TEST(Safetensors, U8TensorsRoundTripBesideF32AtTheirByteSizes) {
  ScratchDir dir;
  std::string path = dir.file("state.safetensors");
  uint8_t codes[5] = {0, 1, 127, 128, 255};
  float absmax[2] = {0.25f, 3.0f};
  writeSafetensors(path, {{"w.state1", {5}, codes, "U8"}, {"w.absmax1", {2}, absmax}});
  // 8 length bytes, the header, then 5 code bytes and 8 absmax bytes.
  SafetensorsReader reader(path);
  EXPECT_EQ(reader.entries().at("w.state1").dtype, "U8");
  EXPECT_EQ(reader.entries().at("w.state1").dataEnd - reader.entries().at("w.state1").dataBegin,
            5u);
  EXPECT_EQ(reader.entries().at("w.absmax1").dataEnd - reader.entries().at("w.absmax1").dataBegin,
            8u);
  uint8_t codesBack[5];
  float absmaxBack[2];
  reader.readU8("w.state1", {5}, codesBack);
  reader.readF32("w.absmax1", {2}, absmaxBack);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(codesBack[i], codes[i]) << "code " << i;
  EXPECT_EQ(absmaxBack[0], 0.25f);
  EXPECT_EQ(absmaxBack[1], 3.0f);
  // Each reader takes only its own dtype.
  EXPECT_EQ(errorOf([&] { reader.readU8("w.absmax1", {2}, codesBack); }),
            path + ": tensor w.absmax1: dtype F32 where U8 is expected");
  EXPECT_EQ(errorOf([&] { reader.readF32("w.state1", {5}, absmaxBack); }),
            path + ": tensor w.state1: dtype U8 is not supported (F32, BF16 or F16)");
  EXPECT_EQ(
      errorOf([&] { writeSafetensors(dir.file("bad.safetensors"), {{"x", {1}, codes, "I8"}}); }),
      dir.file("bad.safetensors") + ": tensor x: cannot write dtype I8 (F32, BF16, F16 or U8)");
}

// 16-bit tensors are written as their bit patterns, two bytes a value, and read back exactly:
// bf16 0x3FC0 is 1.5, binary16 0xC500 is -5.
TEST(Safetensors, WritesBf16AndF16AtTwoBytesAValue) {
  ScratchDir dir;
  std::string path = dir.file("half.safetensors");
  uint16_t bf16Bits[2] = {0x3FC0, 0x0000}, f16Bits[1] = {0xC500};
  writeSafetensors(path, {{"b", {2}, bf16Bits, "BF16"}, {"h", {1}, f16Bits, "F16"}});
  SafetensorsReader reader(path);
  EXPECT_EQ(reader.entries().at("b").dtype, "BF16");
  EXPECT_EQ(reader.entries().at("b").dataEnd - reader.entries().at("b").dataBegin, 4u);
  float b[2], h[1];
  reader.readF32("b", {2}, b);
  reader.readF32("h", {1}, h);
  EXPECT_EQ(b[0], 1.5f);
  EXPECT_EQ(b[1], 0.0f);
  EXPECT_EQ(h[0], -5.0f);
}

TEST(Safetensors, ReadsAHandAssembledFileAndConvertsHalfPrecision) {
  ScratchDir dir;
  std::string path = dir.file("hand.safetensors");
  std::string header = R"({"__metadata__":{"format":"pt"},)"
                       R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[8,14]},)"
                       R"("h":{"dtype":"F16","shape":[1,3],"data_offsets":[14,20]}})";
  std::string data = {// a: 1.5f = 0x3FC00000, -2.0f = 0xC0000000 (little-endian)
                      '\x00', '\x00', '\xC0', '\x3F', '\x00', '\x00', '\x00', '\xC0',
                      // b: BF16 is the top half of an fp32: 0x3F80 -> 1.0; 0xC040 -> -3.0;
                      // 0x3E20 -> 0x3E200000 = 2^(124-127) * (1 + 0.25) = 0.15625
                      '\x80', '\x3F', '\x40', '\xC0', '\x20', '\x3E',
                      // h: F16 0x3C00 -> 1.0; 0xC500 -> -(2^(17-15) * (1 + 256/1024)) = -5.0;
                      // 0x0001 -> the smallest subnormal, 2^-24
                      '\x00', '\x3C', '\x00', '\xC5', '\x01', '\x00'};
  testing::writeText(path, assemble(header, data));

  SafetensorsReader reader(path);
  float a[2], b[3], h[3];
  reader.readF32("a", {2}, a);
  reader.readF32("b", {3}, b);
  reader.readF32("h", {1, 3}, h);
  EXPECT_EQ(a[0], 1.5f);
  EXPECT_EQ(a[1], -2.0f);
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(b[1], -3.0f);
  EXPECT_EQ(b[2], 0.15625f);
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], -5.0f);
  EXPECT_EQ(h[2], std::ldexp(1.0f, -24));
  EXPECT_EQ(reader.entries().at("b").dtype, "BF16");
}

TEST(Safetensors, WidensLongHalfPrecisionTensorsWithoutOverlapErrors) {
  // The reader widens 16-bit data inside the caller's buffer; every element must survive.
  ScratchDir dir;
  std::string path = dir.file("long.safetensors");
  constexpr int kCount = 1001;
  std::string data;
  for (int i = 0; i < kCount; ++i) { // BF16 bits 0x3F80 + i: 1.0 and the floats above it
    data += char((0x3F80 + i) & 0xFF);
    data += char((0x3F80 + i) >> 8);
  }
  for (int i = 0; i < kCount; ++i) { // F16 integers 0..1000 are exact
    uint16_t half = halfBitsOf(i);
    data += char(half & 0xFF);
    data += char(half >> 8);
  }
  std::string header = R"({"b":{"dtype":"BF16","shape":[1001],"data_offsets":[0,2002]},)"
                       R"("h":{"dtype":"F16","shape":[1001],"data_offsets":[2002,4004]}})";
  testing::writeText(path, assemble(header, data));
  SafetensorsReader reader(path);
  std::vector<float> b(kCount), h(kCount);
  reader.readF32("b", {kCount}, b.data());
  reader.readF32("h", {kCount}, h.data());
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(bitsOf(b[i]), uint32_t(0x3F80 + i) << 16) << "BF16 element " << i;
    ASSERT_EQ(h[i], float(i)) << "F16 element " << i;
  }
}

TEST(Safetensors, MissingTensorNamesFileAndTensor) {
  ScratchDir dir;
  std::string path = writeSmallFile(dir);
  SafetensorsReader reader(path);
  float out[6];
  std::string error = errorOf([&] { reader.readF32("classifier.weight", {2, 3}, out); });
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("tensor classifier.weight: not found"), std::string::npos) << error;
}

TEST(Safetensors, ShapeMismatchNamesBothShapes) {
  ScratchDir dir;
  std::string path = writeSmallFile(dir);
  SafetensorsReader reader(path);
  float out[6];
  EXPECT_EQ(errorOf([&] { reader.readF32("w", {3, 2}, out); }),
            path + ": tensor w: file has [2,3], model expects [3,2]");
}

TEST(Safetensors, TruncatedDataNamesTheTensor) {
  ScratchDir dir;
  std::string path = writeSmallFile(dir);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  std::string error = errorOf([&] { SafetensorsReader reader(path); });
  EXPECT_NE(error.find(path + ": tensor w: data ends at byte 24"), std::string::npos) << error;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
}

TEST(Safetensors, TruncatedHeaderIsReported) {
  ScratchDir dir;
  std::string path = dir.file("short.safetensors");
  testing::writeText(path, std::string("\x05\x00\x00", 3));
  EXPECT_NE(errorOf([&] { SafetensorsReader reader(path); }).find(path + ": truncated file"),
            std::string::npos);
  testing::writeText(path, assemble(R"({"w":{"dtype":"F32","shape":[1],)", "").substr(0, 20));
  std::string error = errorOf([&] { SafetensorsReader reader(path); });
  EXPECT_NE(error.find(path + ": truncated file: the header claims"), std::string::npos) << error;
}

TEST(Safetensors, CorruptHeadersAreReported) {
  ScratchDir dir;
  std::string path = dir.file("corrupt.safetensors");
  struct Case {
    std::string header;
    std::string expected;
  } cases[] = {
      {"{not json", path + ": bad header: invalid JSON"},
      {"[1,2]", path + ": bad header: not a JSON object"},
      {R"({"w":{"shape":[1],"data_offsets":[0,4]}})", path + ": tensor w: bad header: missing"},
      {R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
       path + ": tensor w: bad header: shape dimensions"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})",
       path + ": tensor w: bad header: data_offsets span 4 bytes, but F32 [2] needs 8"},
      // 2^62 + 1 values of 4 bytes: the byte count is beyond 64 bits.
      {R"({"w":{"dtype":"F32","shape":[4611686018427387905],"data_offsets":[0,4]}})",
       path + ": tensor w: bad header: data_offsets span 4 bytes, but F32 "
              "[4611686018427387905] needs more than 2^64"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})",
       path + ": tensor w: bad header: data_offsets begin 4 is after end 0"},
      {R"({"w":{"dtype":"F32","shape":[1e400],"data_offsets":[0,4]}})",
       path + ": tensor w: bad header: number 1e400 is out of range"},
      {R"({"w":)" + std::string(100000, '[') + std::string(100000, ']') + "}",
       path + ": tensor w: bad header: nesting deeper than 64 levels (header line 1, column 69)"},
  };
  for (const Case &c : cases) {
    testing::writeText(path, assemble(c.header, std::string(8, '\0')));
    std::string error = errorOf([&] { SafetensorsReader reader(path); });
    EXPECT_EQ(error.rfind(c.expected, 0), 0u) << "header " << c.header << "\ngot: " << error;
  }
}

// The tensors must tile the data section exactly, as the reference implementation requires:
// overlapping tensors would share bytes, and a gap or trailing bytes mean the header does not
// describe the file.
TEST(Safetensors, TensorsMustTileTheDataSection) {
  ScratchDir dir;
  std::string path = dir.file("layout.safetensors");
  auto tensor = [](const char *name, int begin, int end) {
    return std::string("\"") + name + R"(":{"dtype":"F32","shape":[)" +
           std::to_string((end - begin) / 4) + R"(],"data_offsets":[)" + std::to_string(begin) +
           "," + std::to_string(end) + "]}";
  };
  struct Case {
    std::string header;
    size_t dataBytes;
    std::string expected;
  } cases[] = {
      {"{" + tensor("a", 0, 8) + "," + tensor("b", 4, 12) + "}", 12,
       path + ": tensor b: bad header: data_offsets [4, 12] overlap tensor a's [0, 8]"},
      {"{" + tensor("a", 0, 4) + "," + tensor("b", 8, 12) + "}", 12,
       path + ": tensor b: bad header: data_offsets [8, 12] leave bytes [4, 8) of the data "
              "section unused (after tensor a)"},
      {"{" + tensor("a", 4, 8) + "}", 8,
       path + ": tensor a: bad header: data_offsets [4, 8] leave bytes [0, 4) of the data "
              "section unused"},
      {"{" + tensor("a", 0, 4) + "," + tensor("b", 4, 8) + "}", 20,
       path + ": bad header: 12 bytes follow the last tensor, b, in the data section (the "
              "tensors end at byte 8 of 20)"},
  };
  for (const Case &c : cases) {
    testing::writeText(path, assemble(c.header, std::string(c.dataBytes, '\0')));
    EXPECT_EQ(errorOf([&] { SafetensorsReader reader(path); }), c.expected) << c.header;
  }
  // Empty tensors take no bytes wherever they sit, and tensors may be listed in any order.
  testing::writeText(path, assemble("{" + tensor("b", 4, 8) + "," + tensor("e", 4, 4) + "," +
                                        tensor("a", 0, 4) + "}",
                                    std::string(8, '\0')));
  EXPECT_EQ(SafetensorsReader(path).entries().size(), 3u);
}

TEST(Safetensors, UnsupportedDtypeNamesTheTensor) {
  ScratchDir dir;
  std::string path = dir.file("ints.safetensors");
  testing::writeText(path, assemble(R"({"position_ids":{"dtype":"I64","shape":[1],)"
                                    R"("data_offsets":[0,8]}})",
                                    std::string(8, '\0')));
  SafetensorsReader reader(path);
  float out[2];
  EXPECT_EQ(errorOf([&] { reader.readF32("position_ids", {1}, out); }),
            path + ": tensor position_ids: dtype I64 is not supported (F32, BF16 or F16)");
}

TEST(Safetensors, MissingFileAndUnwritablePathAreReported) {
  ScratchDir dir;
  std::string missing = dir.file("absent.safetensors");
  std::string error = errorOf([&] { SafetensorsReader reader(missing); });
  EXPECT_EQ(error.rfind(missing + ": cannot open", 0), 0u) << error;
  std::string unwritable = dir.file("no/such/dir/out.safetensors");
  float value = 1.0f;
  error = errorOf([&] { writeSafetensors(unwritable, {{"w", {1}, &value}}); });
  EXPECT_EQ(error, dir.file("no/such/dir/.out.safetensors.tmp") +
                       ": cannot create: No such file or directory");
}

TEST(Safetensors, RewriteReplacesTheFileAtomically) {
  ScratchDir dir;
  std::string path = writeSmallFile(dir);
  float values[2] = {7, 8};
  writeSafetensors(path, {{"v", {2}, values}});
  SafetensorsReader reader(path);
  EXPECT_FALSE(reader.contains("w"));
  float back[2];
  reader.readF32("v", {2}, back);
  EXPECT_EQ(back[1], 8.0f);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.file("")),
                          std::filesystem::directory_iterator()),
            1)
      << "no temporary is left beside the file";
}

} // namespace
} // namespace bertc
