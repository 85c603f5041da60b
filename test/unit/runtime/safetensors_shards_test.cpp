// Sharded safetensors: the grouping into shards (hand-computed for given tensor sizes, as
// huggingface_hub groups them), shard file names, the index's text and its errors, the
// reader across shards (BF16 and F16 shards checked against conversions computed from the
// formats' definitions, and the errors of an index and shards that disagree), and the
// writer (one file below the limit, shards and an index above it, nothing stale left).
#include "bertc/runtime/safetensors_shards.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace bertc {
namespace {

namespace fs = std::filesystem;
using testing::errorOf;
using testing::readText;
using testing::ScratchDir;
using testing::writeText;
using Shards = std::vector<std::vector<size_t>>;

TEST(SafetensorsShards, GroupsInOrderClosingAShardBeforeItWouldOverflow) {
  // huggingface_hub's docstring example: a limit of 10 and [6, 6, 2, 6, 2, 2] make
  // [6], [6+2], [6+2+2], not the tighter [6+2+2], [6+2], [6].
  EXPECT_EQ(groupIntoShards({6, 6, 2, 6, 2, 2}, 10), (Shards{{0}, {1, 2}, {3, 4, 5}}));
  // 1 + 2 + 3 = 6 fits 10: one shard, saved unsharded.
  EXPECT_EQ(groupIntoShards({1, 2, 3}, 10), (Shards{{0, 1, 2}}));
  // A shard may reach the limit exactly: 5 + 5 = 10 is not over 10; the third 5 is.
  EXPECT_EQ(groupIntoShards({5, 5, 5}, 10), (Shards{{0, 1}, {2}}));
  // A tensor of exactly the limit is not larger than it: it closes the shard being filled
  // and fills the next, where one larger goes out alone and lets 1 and 1 share a shard.
  EXPECT_EQ(groupIntoShards({1, 10, 1}, 10), (Shards{{0}, {1}, {2}}));
  EXPECT_EQ(groupIntoShards({1, 11, 1}, 10), (Shards{{1}, {0, 2}}));
  EXPECT_EQ(groupIntoShards({}, 10), Shards{});
  EXPECT_EQ(groupIntoShards({0, 0}, 1), (Shards{{0, 1}}));
}

TEST(SafetensorsShards, ATensorLargerThanTheLimitIsAShardOfItsOwnPlacedWhenMet) {
  // 12 > 10 is appended at once, before the shard being filled, which 1 and 2 share.
  EXPECT_EQ(groupIntoShards({1, 12, 2}, 10), (Shards{{1}, {0, 2}}));
  // 6; 6 closes [6] and starts a shard; 12 goes out alone; 3 joins the second 6 (9 <= 10).
  EXPECT_EQ(groupIntoShards({6, 6, 12, 3}, 10), (Shards{{0}, {2}, {1, 3}}));
  // 5 GB as save_pretrained reads "5GB": 5 * 10^9 bytes, not 5 GiB.
  EXPECT_EQ(groupIntoShards({3'000'000'000, 2'000'000'000, 1}, kDefaultMaxShardBytes),
            (Shards{{0, 1}, {2}}));
}

TEST(SafetensorsShards, NamesShardsAsTransformersDoes) {
  EXPECT_EQ(shardFileName(0, 2), "model-00001-of-00002.safetensors");
  EXPECT_EQ(shardFileName(11, 123456), "model-00012-of-123456.safetensors");
  EXPECT_TRUE(isShardFileName("model-00001-of-00002.safetensors"));
  EXPECT_TRUE(isShardFileName("model-00012-of-123456.safetensors"));
  for (const char *name : {"model.safetensors", "model-1-of-2.safetensors",
                           "model-00001-of-00002.safetensors.tmp", "model-00001-00002.safetensors",
                           "pytorch_model-00001-of-00002.bin", "model-00001-of-0000x.safetensors"})
    EXPECT_FALSE(isShardFileName(name)) << name;
}

TEST(SafetensorsShards, IndexTextIsJsonDumpsWithSortedKeys) {
  SafetensorsIndex index;
  index.totalSize = 44;
  index.weightMap = {{"d", "model-00003-of-00003.safetensors"},
                     {"a", "model-00001-of-00003.safetensors"}};
  std::string text = formatSafetensorsIndex(index);
  EXPECT_EQ(text, "{\n"
                  "  \"metadata\": {\n"
                  "    \"total_size\": 44\n"
                  "  },\n"
                  "  \"weight_map\": {\n"
                  "    \"a\": \"model-00001-of-00003.safetensors\",\n"
                  "    \"d\": \"model-00003-of-00003.safetensors\"\n"
                  "  }\n"
                  "}\n");
  SafetensorsIndex back = parseSafetensorsIndex(text, "index.json");
  EXPECT_EQ(back.totalSize, 44u);
  EXPECT_EQ(back.weightMap, index.weightMap);
  // Other metadata, and an index without any, are accepted.
  EXPECT_EQ(parseSafetensorsIndex(R"({"weight_map": {"w": "x.safetensors"}})", "i").totalSize, 0u);
}

TEST(SafetensorsShards, AnIndexThatCannotBeTrustedIsRefusedNamingTheTensor) {
  auto parseError = [](const std::string &text) {
    return errorOf([&] { parseSafetensorsIndex(text, "dir/model.safetensors.index.json"); });
  };
  const std::string where = "dir/model.safetensors.index.json: ";
  EXPECT_EQ(parseError("{\"weight_map\": {\"a\": \"x\",}}"),
            where + "malformed JSON: parse error at line 1, column 26: syntax error while parsing "
                    "object key - unexpected '}'; expected string literal");
  EXPECT_EQ(parseError("[]"), where + "not a safetensors index: the JSON is not an object");
  EXPECT_EQ(parseError(R"({"metadata": {}})"),
            where + "not a safetensors index: no \"weight_map\" object");
  EXPECT_EQ(parseError(R"({"weight_map": {"a": 3}})"),
            where + "tensor a: its shard is 3, not a file name");
  for (const char *shard : {"../x.safetensors", "/etc/passwd", "sub/x.safetensors", "", ".."})
    EXPECT_EQ(parseError(std::string(R"({"weight_map": {"a": ")") + shard + "\"}}"),
              where + "tensor a: its shard \"" + shard + "\" is not a file in the index's folder");
  EXPECT_EQ(parseError(R"({"weight_map": {"a": "x", "b": "y", "a": "y"}})"),
            where + "tensor a: listed twice in the weight_map");
  // The same name under metadata and weight_map is no duplicate.
  EXPECT_NO_THROW(parseSafetensorsIndex(R"({"metadata": {"a": 1}, "weight_map": {"a": "x"}})", ""));
}

/// A safetensors file from a header text and raw data bytes.
std::string assemble(const std::string &header, const std::string &data) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = char((uint64_t(header.size()) >> (8 * i)) & 0xFF);
  return bytes + header + data;
}

/// Every 16-bit pattern 0..65535, little-endian.
std::string everyHalfPattern() {
  std::string data;
  for (uint32_t bits = 0; bits < 65536; ++bits)
    data += {char(bits & 0xFF), char(bits >> 8)};
  return data;
}

/// A bfloat16's value from the format's definition: sign, 8 exponent bits (bias 127),
/// 7 fraction bits; exponent 0 is subnormal, 255 infinity or NaN.
double bf16Value(uint16_t bits) {
  int exponent = (bits >> 7) & 0xFF, fraction = bits & 0x7F;
  double magnitude = exponent == 0      ? std::ldexp(fraction / 128.0, -126)
                     : exponent == 0xFF ? (fraction ? NAN : INFINITY)
                                        : std::ldexp(1 + fraction / 128.0, exponent - 127);
  return bits & 0x8000 ? -magnitude : magnitude;
}

/// An IEEE binary16's value likewise: 5 exponent bits (bias 15), 10 fraction bits.
double f16Value(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1F, fraction = bits & 0x3FF;
  double magnitude = exponent == 0      ? std::ldexp(fraction / 1024.0, -14)
                     : exponent == 0x1F ? (fraction ? NAN : INFINITY)
                                        : std::ldexp(1 + fraction / 1024.0, exponent - 15);
  return bits & 0x8000 ? -magnitude : magnitude;
}

/// A folder with a BF16 shard ("b": every pattern, [256, 256]) and an F16 one ("h": every
/// pattern, [65536], beside "s", F32 [1] = 2.5), and its index.
std::string writeHalfPrecisionShards(const ScratchDir &dir) {
  const std::string bf16Header =
      R"({"b":{"dtype":"BF16","shape":[256,256],"data_offsets":[0,131072]}})";
  const std::string f16Header =
      R"({"h":{"dtype":"F16","shape":[65536],"data_offsets":[0,131072]},)"
      R"("s":{"dtype":"F32","shape":[1],"data_offsets":[131072,131076]}})";
  writeText(dir.file("model-00001-of-00002.safetensors"), assemble(bf16Header, everyHalfPattern()));
  // 2.5f = 0x40200000, little-endian.
  writeText(dir.file("model-00002-of-00002.safetensors"),
            assemble(f16Header, everyHalfPattern() + std::string("\x00\x00\x20\x40", 4)));
  writeText(dir.file("model.safetensors.index.json"),
            R"({"metadata": {"total_size": 262148}, "weight_map": {)"
            R"("b": "model-00001-of-00002.safetensors", "h": "model-00002-of-00002.safetensors",)"
            R"( "s": "model-00002-of-00002.safetensors"}})");
  return dir.file("model.safetensors.index.json");
}

TEST(SafetensorsShards, ReadsBf16AndF16ShardsAsTheFormatsDefineTheirValues) {
  ScratchDir dir;
  ShardedSafetensorsReader reader(writeHalfPrecisionShards(dir));
  EXPECT_EQ(reader.entries().size(), 3u);
  EXPECT_EQ(reader.fileOf("b"), dir.file("model-00001-of-00002.safetensors"));
  EXPECT_EQ(reader.fileOf("s"), dir.file("model-00002-of-00002.safetensors"));
  std::vector<float> b(65536), h(65536);
  float s = 0;
  reader.readF32("b", {256, 256}, b.data());
  reader.readF32("h", {65536}, h.data());
  reader.readF32("s", {1}, &s);
  EXPECT_EQ(s, 2.5f);
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    for (auto [read, expected, dtype] : {std::tuple{b[bits], bf16Value(uint16_t(bits)), "BF16"},
                                         std::tuple{h[bits], f16Value(uint16_t(bits)), "F16"}}) {
      if (std::isnan(expected))
        EXPECT_TRUE(std::isnan(read)) << dtype << " bits " << bits;
      else
        ASSERT_EQ(double(read), expected) << dtype << " bits " << bits;
    }
  }
  EXPECT_EQ(errorOf([&] { reader.readF32("b", {65536}, b.data()); }),
            dir.file("model-00001-of-00002.safetensors") +
                ": tensor b: file has [256,256], model expects [65536]");
  EXPECT_EQ(errorOf([&] { reader.readF32("x", {1}, &s); }),
            dir.file("model.safetensors.index.json") +
                ": tensor x: not found (the index lists 3 tensors)");
}

TEST(SafetensorsShards, ShardsThatDisagreeWithTheIndexAreRefused) {
  ScratchDir dir;
  std::string index = writeHalfPrecisionShards(dir);
  const std::string shard1 = "model-00001-of-00002.safetensors",
                    shard2 = "model-00002-of-00002.safetensors";
  auto withWeightMap = [&](const std::string &weightMap) {
    writeText(index, "{\"weight_map\": {" + weightMap + "}}");
    return errorOf([&] { ShardedSafetensorsReader reader(index); });
  };
  EXPECT_EQ(withWeightMap("\"b\": \"" + shard1 + "\", \"h\": \"" + shard2 + "\", \"s\": \"" +
                          shard2 + "\""),
            "(nothing thrown)");
  // The index names a shard the folder lacks.
  EXPECT_EQ(withWeightMap("\"b\": \"" + shard1 + "\", \"h\": \"model-00003.safetensors\""),
            index + ": tensor h: " + dir.file("model-00003.safetensors") +
                ": cannot open: No such file or directory");
  // It maps a tensor to a shard that does not hold it.
  EXPECT_EQ(withWeightMap("\"b\": \"" + shard2 + "\", \"h\": \"" + shard2 + "\", \"s\": \"" +
                          shard2 + "\""),
            index + ": tensor b: the index maps it to " + shard2 + ", which does not hold it");
  // A shard holds a tensor the index does not list.
  EXPECT_EQ(withWeightMap("\"b\": \"" + shard1 + "\", \"h\": \"" + shard2 + "\""),
            index + ": tensor s: in " + shard2 + " but not in the index's weight_map");
  // A tensor in two shards (a shard of an earlier save, holding s and t, beside the new ones).
  writeText(dir.file("model-00001-of-00003.safetensors"),
            assemble(R"({"s":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                     R"("t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                     std::string(8, '\0')));
  EXPECT_EQ(withWeightMap("\"b\": \"" + shard1 + "\", \"h\": \"" + shard2 + "\", \"s\": \"" +
                          shard2 + "\", \"t\": \"model-00001-of-00003.safetensors\""),
            index + ": tensor s: in both " + shard2 +
                " (where the index maps it) and model-00001-of-00003.safetensors");
}

/// Names in `dir`, sorted.
std::vector<std::string> listing(const std::string &dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// Four F32 tensors in a state dict's order: d [5] (20 bytes), a [2] (8), c [1] (4), b [3]
/// (12); values 0..10 in that order.
struct FourTensors {
  float values[11] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<TensorToWrite> tensors = {
      {"d", {5}, values}, {"a", {2}, values + 5}, {"c", {1}, values + 7}, {"b", {3}, values + 8}};
};

TEST(SafetensorsShards, AModelBelowTheLimitIsOneFileAsWrittenUnsharded) {
  ScratchDir dir;
  FourTensors model;
  EXPECT_EQ(saveModelSafetensors(dir.file(""), model.tensors, 44),
            std::vector<std::string>{"model.safetensors"});
  std::vector<TensorToWrite> byName = {model.tensors[1], model.tensors[3], model.tensors[2],
                                       model.tensors[0]};
  writeSafetensors(dir.file("expected.safetensors"), byName, {{"format", "pt"}});
  EXPECT_EQ(readText(dir.file("model.safetensors")), readText(dir.file("expected.safetensors")));
}

TEST(SafetensorsShards, AModelAboveTheLimitIsShardsAndAnIndex) {
  ScratchDir dir;
  FourTensors model;
  // Limit 20: d (20) fills the first shard; a (8) + c (4) the second; b (12) would make 24.
  EXPECT_EQ(saveModelSafetensors(dir.file(""), model.tensors, 20),
            (std::vector<std::string>{
                "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                "model-00003-of-00003.safetensors", "model.safetensors.index.json"}));
  EXPECT_EQ(readText(dir.file("model.safetensors.index.json")),
            "{\n  \"metadata\": {\n    \"total_size\": 44\n  },\n  \"weight_map\": {\n"
            "    \"a\": \"model-00002-of-00003.safetensors\",\n"
            "    \"b\": \"model-00003-of-00003.safetensors\",\n"
            "    \"c\": \"model-00002-of-00003.safetensors\",\n"
            "    \"d\": \"model-00001-of-00003.safetensors\"\n  }\n}\n");
  SafetensorsReader second(dir.file("model-00002-of-00003.safetensors"));
  EXPECT_EQ(second.entries().at("a").dataBegin, 0u) << "a shard's tensors in name order";
  EXPECT_EQ(second.entries().at("c").dataBegin, 8u);
  EXPECT_EQ(second.metadata().at("format"), "pt");

  ShardedSafetensorsReader reader(dir.file("model.safetensors.index.json"));
  float values[11];
  reader.readF32("d", {5}, values);
  reader.readF32("a", {2}, values + 5);
  reader.readF32("c", {1}, values + 7);
  reader.readF32("b", {3}, values + 8);
  EXPECT_TRUE(std::equal(values, values + 11, model.values));
}

TEST(SafetensorsShards, NoWeightsOfAnEarlierSaveStayBehind) {
  ScratchDir dir;
  FourTensors model;
  writeText(dir.file("model.safetensors"), "an earlier unsharded save");
  writeText(dir.file("model-00004-of-00005.safetensors"), "a shard of an earlier save");
  writeText(dir.file("model-1-of-2.safetensors"), "not a shard's name: the user's");
  writeText(dir.file("config.json"), "{}");
  fs::create_directories(dir.file("checkpoint-4"));
  saveModelSafetensors(dir.file(""), model.tensors, 20);
  EXPECT_EQ(listing(dir.file("")),
            (std::vector<std::string>{
                "checkpoint-4", "config.json", "model-00001-of-00003.safetensors",
                "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors",
                "model-1-of-2.safetensors", "model.safetensors.index.json"}));
  // Fewer shards next time: the third goes.
  saveModelSafetensors(dir.file(""), model.tensors, 32);
  EXPECT_EQ(
      listing(dir.file("")),
      (std::vector<std::string>{"checkpoint-4", "config.json", "model-00001-of-00002.safetensors",
                                "model-00002-of-00002.safetensors", "model-1-of-2.safetensors",
                                "model.safetensors.index.json"}));
  EXPECT_NO_THROW(ShardedSafetensorsReader(dir.file("model.safetensors.index.json")));
  // Unsharded again: the index and the shards go.
  saveModelSafetensors(dir.file(""), model.tensors, kDefaultMaxShardBytes);
  EXPECT_EQ(listing(dir.file("")),
            (std::vector<std::string>{"checkpoint-4", "config.json", "model-1-of-2.safetensors",
                                      "model.safetensors"}));
  EXPECT_EQ(modelSafetensorsIn(dir.file("")), dir.file("model.safetensors"));
  EXPECT_EQ(modelSafetensorsIn(dir.file("checkpoint-4")), "");
}

} // namespace
} // namespace bertc
