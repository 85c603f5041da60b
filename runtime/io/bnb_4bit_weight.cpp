// A bitsandbytes 4-bit weight assembled from its tensors (bnb_4bit_weight.h): found and
// checked from the safetensors header alone, then read straight into bertc's NF4 layout.
#include "bertc/runtime/bnb_4bit_weight.h"

#include "bertc/runtime/safetensors_shards.h"

#include "shape_text.h"

#include <string>

namespace bertc {

namespace {
/// The quant_state tensor's suffix; bitsandbytes writes "quant_state.bitsandbytes__" and
/// the quant type.
const std::string kQuantStatePrefix = ".quant_state.bitsandbytes__";
/// A quant_state's JSON is about 200 bytes; a larger one is not bitsandbytes'.
constexpr int64_t kMaxQuantStateBytes = 1 << 16;

/// The name of `weight`'s quant_state tensor: exactly one, of quant type nf4.
template <class Reader>
std::string quantStateName(const Reader &reader, const std::string &weight) {
  const std::string prefix = weight + kQuantStatePrefix;
  std::string found;
  for (auto it = reader.entries().lower_bound(prefix);
       it != reader.entries().end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    if (!found.empty())
      throw SafetensorsError(reader.path() + ": tensor " + weight + ": two quant states, " + found +
                             " and " + it->first);
    found = it->first;
  }
  const std::string context = reader.path() + ": tensor " + weight;
  if (found.empty())
    throw SafetensorsError(context + ": no " + prefix +
                           "nf4 beside it (not a bitsandbytes 4-bit weight)");
  const std::string quantType = found.substr(prefix.size());
  if (quantType != "nf4")
    throw SafetensorsError(reader.path() + ": tensor " + found + ": quant type " + quantType +
                           (quantType == "fp4" ? ": bertc reads NF4 weights, not FP4"
                                               : ": not bitsandbytes' nf4 or fp4"));
  return found;
}

/// Checks that `name` exists with `dtype` and `shape`.
template <class Reader>
void requireTensor(const Reader &reader, const std::string &name, const std::string &dtype,
                   const std::vector<int64_t> &shape, const std::string &why) {
  const std::string context = reader.path() + ": tensor " + name;
  auto found = reader.entries().find(name);
  if (found == reader.entries().end())
    throw SafetensorsError(context + ": not found (" + why + ")");
  const SafetensorsEntry &entry = found->second;
  if (entry.dtype != dtype || entry.shape != shape)
    throw SafetensorsError(context + ": " + entry.dtype + " " + formatShape(entry.shape) +
                           ", where " + why + " needs " + dtype + " " + formatShape(shape));
}
} // namespace

template <class Reader>
std::vector<std::string> bnb4bitTensorNames(const Reader &reader, const std::string &name) {
  const std::string statePrefix = name + kQuantStatePrefix;
  auto state = reader.entries().lower_bound(statePrefix);
  if (state == reader.entries().end() || state->first.compare(0, statePrefix.size(), statePrefix))
    return {};
  std::vector<std::string> names = {name};
  const std::string partPrefix = name + ".";
  for (auto it = reader.entries().lower_bound(partPrefix);
       it != reader.entries().end() && it->first.compare(0, partPrefix.size(), partPrefix) == 0;
       ++it)
    names.push_back(it->first);
  return names;
}

template <class Reader> Bnb4bitWeight findBnb4bitWeight(Reader &reader, const std::string &name) {
  const std::string stateName = quantStateName(reader, name);
  const SafetensorsEntry &stateEntry = reader.entries().at(stateName);
  const std::string stateContext = reader.path() + ": tensor " + stateName;
  if (stateEntry.dtype != "U8" || stateEntry.shape.size() != 1 ||
      stateEntry.shape[0] > kMaxQuantStateBytes)
    throw SafetensorsError(stateContext + ": " + stateEntry.dtype + " " +
                           formatShape(stateEntry.shape) + ", where a quant_state is U8 [bytes]" +
                           " of at most 65536 bytes");
  std::string text(size_t(stateEntry.shape[0]), '\0');
  reader.readU8(stateName, stateEntry.shape, reinterpret_cast<uint8_t *>(text.data()));

  Bnb4bitWeight weight;
  weight.state = parseBnb4bitQuantState(text, stateContext);
  const int64_t values = weight.state.values();
  weight.layout = nf4Layout(values, weight.state.nested);
  const std::string shape = "shape " + formatShape(weight.state.shape);

  const std::string context = reader.path() + ": tensor " + name;
  auto packed = reader.entries().find(name);
  if (packed == reader.entries().end())
    throw SafetensorsError(context + ": not found (its quant_state is " + stateName + ")");
  if (packed->second.dtype != "U8")
    throw SafetensorsError(context + ": dtype " + packed->second.dtype +
                           ", where bertc reads packed NF4 codes as U8");
  const uint64_t packedBytes = packed->second.dataEnd - packed->second.dataBegin;
  if (packedBytes != uint64_t(nf4PackedBytes(values)))
    throw SafetensorsError(context + ": " + std::to_string(packedBytes) + " packed bytes, but " +
                           stateName + "'s " + shape + " needs " +
                           std::to_string(nf4PackedBytes(values)));

  const int64_t blocks = nf4Blocks(values);
  const std::string why = "the NF4 state of " + shape;
  requireTensor(reader, name + ".absmax", weight.state.nested ? "U8" : "F32", {blocks}, why);
  requireTensor(reader, name + ".quant_map", "F32", {kNf4MapSize}, why);
  const bool hasNestedTensors =
      reader.contains(name + ".nested_absmax") || reader.contains(name + ".nested_quant_map");
  if (!weight.state.nested && hasNestedTensors)
    throw SafetensorsError(context + ": has nested absmaxes, but " + stateName +
                           " has no nested_offset (no double quantization)");
  if (weight.state.nested) {
    requireTensor(reader, name + ".nested_absmax", "F32", {nf4NestedBlocks(values)}, why);
    requireTensor(reader, name + ".nested_quant_map", "F32", {kNestedMapSize}, why);
  }
  return weight;
}

template <class Reader>
void readBnb4bitWeight(Reader &reader, const std::string &name, const Bnb4bitWeight &weight,
                       void *base) {
  auto *bytes = static_cast<uint8_t *>(base);
  auto floatsAt = [&](int64_t offset) { return reinterpret_cast<float *>(bytes + offset); };
  const Nf4Layout &layout = weight.layout;
  const int64_t blocks = nf4Blocks(layout.values);
  reader.readU8(name, reader.entries().at(name).shape, bytes);
  reader.readF32(name + ".quant_map", {kNf4MapSize}, floatsAt(layout.quantMapOffset));
  if (!layout.nested) {
    reader.readF32(name + ".absmax", {blocks}, floatsAt(layout.absmaxOffset));
    return;
  }
  reader.readU8(name + ".absmax", {blocks}, bytes + layout.absmaxOffset);
  reader.readF32(name + ".nested_absmax", {nf4NestedBlocks(layout.values)},
                 floatsAt(layout.nestedAbsmaxOffset));
  reader.readF32(name + ".nested_quant_map", {kNestedMapSize}, floatsAt(layout.nestedMapOffset));
  *floatsAt(layout.absmaxMeanOffset) = weight.state.nestedOffset;
}

template std::vector<std::string> bnb4bitTensorNames(const SafetensorsReader &,
                                                     const std::string &);
template std::vector<std::string> bnb4bitTensorNames(const ShardedSafetensorsReader &,
                                                     const std::string &);
template Bnb4bitWeight findBnb4bitWeight(SafetensorsReader &, const std::string &);
template Bnb4bitWeight findBnb4bitWeight(ShardedSafetensorsReader &, const std::string &);
template void readBnb4bitWeight(SafetensorsReader &, const std::string &, const Bnb4bitWeight &,
                                void *);
template void readBnb4bitWeight(ShardedSafetensorsReader &, const std::string &,
                                const Bnb4bitWeight &, void *);

} // namespace bertc
