// The JSON bitsandbytes packs into a 4-bit weight's quant_state tensor (QuantState.as_dict
// with packed=True: json.dumps of its non-tensor items). Read strictly, as bitsandbytes'
// QuantState.from_dict does: an unknown key is an error, and so is any value bertc could
// not dequantize exactly (another quant_type, another block size).
#include "bertc/runtime/bnb_4bit_weight.h"

#include "bertc/abi/quantized_weight_layout.h"
#include "bertc/runtime/input_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace bertc {

namespace {
/// The most values a weight may hold: far above any model's, far below where the layout's
/// byte arithmetic could overflow.
constexpr int64_t kMaxWeightValues = int64_t(1) << 48;

const char *const kNestedKeys[] = {"nested_blocksize", "nested_dtype", "nested_offset"};

/// Reads a quant_state's keys, each error naming the key.
class StateReader {
public:
  StateReader(const nlohmann::json &object, const std::string &context)
      : object_(object), context_(context) {}

  SafetensorsError error(const std::string &key, const std::string &what) const {
    return SafetensorsError(context_ + ": quant_state key '" + key + "': " + what);
  }

  const nlohmann::json &required(const std::string &key) const {
    auto found = object_.find(key);
    if (found == object_.end())
      throw error(key, "missing");
    return *found;
  }

  std::string string(const std::string &key) const {
    const nlohmann::json &value = required(key);
    if (!value.is_string())
      throw error(key, value.dump() + " is not a string");
    return value.get<std::string>();
  }

  /// An integer key that must equal `expected`; `why` says what bertc reads.
  void integerEqual(const std::string &key, int64_t expected, const std::string &why) const {
    const nlohmann::json &value = required(key);
    if (!value.is_number_integer() || value.get<int64_t>() != expected)
      throw error(key, value.dump() + ", but " + why);
  }

  std::vector<int64_t> shape(const std::string &key) const {
    const nlohmann::json &value = required(key);
    if (!value.is_array())
      throw error(key, value.dump() + " is not a list of dimensions");
    std::vector<int64_t> shape;
    int64_t values = 1;
    for (const nlohmann::json &dim : value) {
      if (!dim.is_number_unsigned())
        throw error(key, value.dump() + " holds " + dim.dump() +
                             ", not a non-negative integer dimension");
      const uint64_t size = dim.get<uint64_t>();
      if (size > uint64_t(kMaxWeightValues) ||
          __builtin_mul_overflow(values, int64_t(size), &values) || values > kMaxWeightValues)
        throw error(key, value.dump() + " holds more than 2^48 values");
      shape.push_back(int64_t(size));
    }
    return shape;
  }

private:
  const nlohmann::json &object_;
  const std::string &context_;
};
} // namespace

int64_t Bnb4bitQuantState::values() const {
  int64_t values = 1;
  for (int64_t dim : shape)
    values *= dim;
  return values;
}

Bnb4bitQuantState parseBnb4bitQuantState(std::string_view text, const std::string &context) {
  const nlohmann::json json = parseJsonLine<SafetensorsError>(text, context + ": quant_state");
  if (!json.is_object())
    throw SafetensorsError(context + ": quant_state is not a JSON object");
  const StateReader reader(json, context);
  static const char *const kKnownKeys[] = {"quant_type",   "blocksize",        "dtype",
                                           "shape",        "nested_blocksize", "nested_dtype",
                                           "nested_offset"};
  for (const auto &[key, value] : json.items())
    if (std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) == std::end(kKnownKeys))
      throw reader.error(key, "not a key of bitsandbytes' QuantState");

  const std::string quantType = reader.string("quant_type");
  if (quantType == "fp4")
    throw reader.error("quant_type", "\"fp4\": bertc reads NF4 weights, not FP4");
  if (quantType != "nf4")
    throw reader.error("quant_type", "\"" + quantType + "\" is not bitsandbytes' nf4 or fp4");
  reader.integerEqual("blocksize", kNf4BlockSize, "bertc reads NF4 in blocks of 64");

  Bnb4bitQuantState state;
  state.dtype = reader.string("dtype");
  if (state.dtype != "float32" && state.dtype != "bfloat16" && state.dtype != "float16")
    throw reader.error("dtype", "\"" + state.dtype + "\" is not float32, bfloat16 or float16");
  state.shape = reader.shape("shape");

  int nestedKeys = 0;
  for (const char *key : kNestedKeys)
    nestedKeys += json.contains(key) ? 1 : 0;
  state.nested = nestedKeys > 0;
  if (!state.nested)
    return state;
  for (const char *key : kNestedKeys)
    if (!json.contains(key))
      throw reader.error(key, "missing, where the other nested keys are present");
  reader.integerEqual("nested_blocksize", kNf4NestedBlockSize,
                      "bertc reads absmaxes double quantized in blocks of 256");
  const std::string nestedDtype = reader.string("nested_dtype");
  if (nestedDtype != "float32")
    throw reader.error("nested_dtype", "\"" + nestedDtype + "\", but bitsandbytes' is float32");
  const nlohmann::json &offset = reader.required("nested_offset");
  if (!offset.is_number() || !(std::fabs(offset.get<double>()) <= double(FLT_MAX)))
    throw reader.error("nested_offset", offset.dump() + " is not a finite fp32 number");
  // bitsandbytes writes the fp32 mean as a Python float: its shortest decimal, exact here.
  state.nestedOffset = float(offset.get<double>());
  return state;
}

} // namespace bertc
