// Reading bitsandbytes 4-bit weights: the quant_state JSON exactly as bitsandbytes writes
// it, with and without double quantization; a file of a weight's tensors read into bertc's
// NF4 layout byte for byte (each part at its offset, the mean from the JSON); and the
// errors a user meets with a state or file bertc cannot read, each naming the file, the
// tensor and, for the JSON, the key.
#include "bertc/runtime/bnb_4bit_weight.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;

/// json.dumps of the state of a [3, 43] weight (129 values: 65 packed bytes, 3 blocks).
const std::string kNestedState =
    R"({"quant_type": "nf4", "blocksize": 64, "dtype": "bfloat16", "shape": [3, 43], )"
    R"("nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": 0.03720000013709068})";
const std::string kPlainState =
    R"({"quant_type": "nf4", "blocksize": 64, "dtype": "float16", "shape": [3, 43]})";

/// `state` with `from` replaced by `to`.
std::string edited(std::string state, const std::string &from, const std::string &to) {
  state.replace(state.find(from), from.size(), to);
  return state;
}

std::string parseError(const std::string &text) {
  return errorOf([&] { parseBnb4bitQuantState(text, "m.safetensors: tensor W.qs"); });
}

std::vector<uint8_t> randomBytes(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<uint8_t> bytes(count);
  for (uint8_t &byte : bytes)
    byte = uint8_t(generator());
  return bytes;
}

/// The tensors bitsandbytes saves for weight W of `state`, with random contents; `omit`
/// leaves one out, and `packedBytes` overrides W's size.
struct Bnb4bitFile {
  std::vector<uint8_t> packed, absmaxCodes, stateBytes;
  std::vector<float> absmax, quantMap, nestedAbsmax, nestedMap;

  Bnb4bitFile(const std::string &state, int64_t packedBytes)
      : packed(randomBytes(packedBytes, 1)), absmaxCodes(randomBytes(3, 2)),
        stateBytes(state.begin(), state.end()), absmax{0.5f, 0.25f, 0.125f}, quantMap(16, 0.0625f),
        nestedAbsmax{0.75f}, nestedMap(256, -0.5f) {}

  std::string write(const ScratchDir &dir, bool nested, const std::string &omit = "") const {
    std::vector<TensorToWrite> tensors = {
        {"W", {int64_t(packed.size()), 1}, packed.data(), "U8"},
        {"W.quant_map", {16}, quantMap.data()},
        {"W.quant_state.bitsandbytes__nf4", {int64_t(stateBytes.size())}, stateBytes.data(), "U8"}};
    if (nested) {
      tensors.push_back({"W.absmax", {3}, absmaxCodes.data(), "U8"});
      tensors.push_back({"W.nested_absmax", {1}, nestedAbsmax.data()});
      tensors.push_back({"W.nested_quant_map", {256}, nestedMap.data()});
    } else {
      tensors.push_back({"W.absmax", {3}, absmax.data()});
    }
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [&](const TensorToWrite &tensor) { return tensor.name == omit; }),
                  tensors.end());
    const std::string path = dir.file("model.safetensors");
    writeSafetensors(path, tensors);
    return path;
  }
};

std::string fileError(const std::string &path) {
  return errorOf([&] {
    SafetensorsReader reader(path);
    findBnb4bitWeight(reader, "W");
  });
}

} // namespace

TEST(Bnb4bitWeight, ParsesStatesAsBitsandbytesWritesThem) {
  const Bnb4bitQuantState nested = parseBnb4bitQuantState(kNestedState, "W");
  EXPECT_EQ(nested.shape, (std::vector<int64_t>{3, 43}));
  EXPECT_EQ(nested.values(), 129);
  EXPECT_EQ(nested.dtype, "bfloat16");
  EXPECT_TRUE(nested.nested);
  EXPECT_EQ(nested.nestedOffset, 0.0372f); // the shortest decimal of the fp32 mean, exact

  const Bnb4bitQuantState plain = parseBnb4bitQuantState(kPlainState, "W");
  EXPECT_FALSE(plain.nested);
  EXPECT_EQ(plain.dtype, "float16");
  EXPECT_EQ(plain.values(), 129);
}

TEST(Bnb4bitWeight, StateErrorsNameTheTensorAndKey) {
  const std::string prefix = "m.safetensors: tensor W.qs: quant_state key ";
  EXPECT_EQ(parseError(edited(kPlainState, "\"nf4\"", "\"fp4\"")),
            prefix + "'quant_type': \"fp4\": bertc reads NF4 weights, not FP4");
  EXPECT_EQ(parseError(edited(kPlainState, "\"nf4\"", "\"int4\"")),
            prefix + "'quant_type': \"int4\" is not bitsandbytes' nf4 or fp4");
  EXPECT_EQ(parseError(edited(kPlainState, "64", "128")),
            prefix + "'blocksize': 128, but bertc reads NF4 in blocks of 64");
  EXPECT_EQ(parseError(edited(kPlainState, "64", "64.0")),
            prefix + "'blocksize': 64.0, but bertc reads NF4 in blocks of 64");
  EXPECT_EQ(parseError(edited(kPlainState, "\"float16\"", "\"int8\"")),
            prefix + "'dtype': \"int8\" is not float32, bfloat16 or float16");
  EXPECT_EQ(parseError(edited(kPlainState, "[3, 43]", "[3, -43]")),
            prefix + "'shape': [3,-43] holds -43, not a non-negative integer dimension");
  EXPECT_EQ(parseError(edited(kPlainState, "[3, 43]", "null")),
            prefix + "'shape': null is not a list of dimensions");
  EXPECT_EQ(parseError(edited(kPlainState, "[3, 43]", "[16777216, 16777217]")),
            prefix + "'shape': [16777216,16777217] holds more than 2^48 values");
  EXPECT_EQ(parseError(edited(kPlainState, "\"shape\"", "\"shapes\"")),
            prefix + "'shapes': not a key of bitsandbytes' QuantState");
  EXPECT_EQ(parseError(edited(kNestedState, R"(, "nested_dtype": "float32")", "")),
            prefix + "'nested_dtype': missing, where the other nested keys are present");
  EXPECT_EQ(parseError(edited(kNestedState, "256", "512")),
            prefix + "'nested_blocksize': 512, but bertc reads absmaxes double quantized in "
                     "blocks of 256");
  EXPECT_EQ(parseError(edited(kNestedState, "0.03720000013709068", "\"0.0372\"")),
            prefix + "'nested_offset': \"0.0372\" is not a finite fp32 number");
  EXPECT_EQ(parseError(edited(kNestedState, "0.03720000013709068", "1e39")),
            prefix + "'nested_offset': 1e+39 is not a finite fp32 number");
  EXPECT_EQ(parseError(edited(kPlainState, R"("quant_type": "nf4", )", "")),
            prefix + "'quant_type': missing");
  EXPECT_EQ(parseError("[1, 2]"), "m.safetensors: tensor W.qs: quant_state is not a JSON object");
  EXPECT_NE(parseError("{\"quant_type\": ")
                .find("m.safetensors: tensor W.qs: quant_state: "
                      "malformed JSON"),
            std::string::npos);
}

// Both forms: every part lands at its layout offset, byte for byte, and the mean is the
// JSON's nested_offset.
TEST(Bnb4bitWeight, ReadsTheTensorsIntoTheLayout) {
  ScratchDir dir;
  for (bool nested : {false, true}) {
    const Bnb4bitFile file(nested ? kNestedState : kPlainState, 65);
    SafetensorsReader reader(file.write(dir, nested));
    const Bnb4bitWeight weight = findBnb4bitWeight(reader, "W");
    EXPECT_EQ(weight.layout.bytes, nf4Layout(129, nested).bytes);
    std::vector<float> storage(weight.layout.bytes / 4, -7.0f);
    readBnb4bitWeight(reader, "W", weight, storage.data());
    const Nf4Weight parts = nf4WeightAt(storage.data(), weight.layout);
    EXPECT_EQ(parts.values, 129);
    EXPECT_EQ(std::memcmp(parts.packed, file.packed.data(), 65), 0);
    EXPECT_EQ(std::memcmp(parts.quantMap, file.quantMap.data(), 64), 0);
    if (!nested) {
      EXPECT_EQ(std::memcmp(parts.absmax, file.absmax.data(), 12), 0);
      continue;
    }
    EXPECT_EQ(std::memcmp(parts.absmaxCodes, file.absmaxCodes.data(), 3), 0);
    EXPECT_EQ(*parts.nestedAbsmax, 0.75f);
    EXPECT_EQ(*parts.absmaxMean, 0.0372f);
    EXPECT_EQ(std::memcmp(parts.nestedMap, file.nestedMap.data(), 1024), 0);
  }
}

TEST(Bnb4bitWeight, FileErrorsNameTheTensor) {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  EXPECT_EQ(fileError(Bnb4bitFile(kPlainState, 64).write(dir, false)),
            path + ": tensor W: 64 packed bytes, but W.quant_state.bitsandbytes__nf4's shape "
                   "[3,43] needs 65");
  EXPECT_EQ(fileError(Bnb4bitFile(kPlainState, 65).write(dir, false, "W.quant_map")),
            path + ": tensor W.quant_map: not found (the NF4 state of shape [3,43])");
  // A nested state whose absmaxes are fp32, as a plain state's.
  const Bnb4bitFile nestedState(kNestedState, 65);
  EXPECT_EQ(fileError(nestedState.write(dir, false)),
            path + ": tensor W.absmax: F32 [3], where the NF4 state of shape [3,43] needs U8 [3]");
  const Bnb4bitFile plainState(kPlainState, 65);
  EXPECT_EQ(fileError(plainState.write(dir, true)),
            path + ": tensor W.absmax: U8 [3], where the NF4 state of shape [3,43] needs F32 [3]");
  EXPECT_EQ(fileError(nestedState.write(dir, true, "W.nested_quant_map")),
            path + ": tensor W.nested_quant_map: not found (the NF4 state of shape [3,43])");
  EXPECT_EQ(fileError(nestedState.write(dir, true, "W")),
            path + ": tensor W: not found (its quant_state is W.quant_state.bitsandbytes__nf4)");
  EXPECT_EQ(fileError(nestedState.write(dir, true, "W.quant_state.bitsandbytes__nf4")),
            path + ": tensor W: no W.quant_state.bitsandbytes__nf4 beside it (not a "
                   "bitsandbytes 4-bit weight)");
  // The state of an FP4 weight, under its own name.
  const std::string fp4 = edited(kPlainState, "nf4", "fp4");
  const std::vector<uint8_t> stateBytes(fp4.begin(), fp4.end());
  writeSafetensors(
      path,
      {{"W.quant_state.bitsandbytes__fp4", {int64_t(stateBytes.size())}, stateBytes.data(), "U8"}});
  EXPECT_EQ(fileError(path), path + ": tensor W.quant_state.bitsandbytes__fp4: quant type fp4: "
                                    "bertc reads NF4 weights, not FP4");
  // A state whose blocks are 128: the JSON's error, naming its tensor.
  const Bnb4bitFile blocks128(edited(kPlainState, "64", "128"), 65);
  EXPECT_EQ(fileError(blocks128.write(dir, false)),
            path + ": tensor W.quant_state.bitsandbytes__nf4: quant_state key 'blocksize': 128, "
                   "but bertc reads NF4 in blocks of 64");
}

} // namespace bertc
