// safetensors reader and writer. The reader checks the whole header up front (JSON shape,
// dtypes, byte ranges against the file size), so a truncated or corrupt checkpoint fails
// before any parameter is touched; tensor bytes are then read straight into the arena.
#include "bertc/runtime/safetensors.h"

#include "bertc/runtime/input_files.h"
#include "bertc/runtime/save_files.h"

#include "half_floats.h"
#include "shape_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

namespace bertc {
namespace {

/// The safetensors reference implementation refuses headers above 100 MB.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

} // namespace

uint64_t dtypeBytes(const std::string &dtype) {
  static const std::map<std::string, uint64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

namespace {

uint64_t readLittleEndian64(const unsigned char *bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | bytes[i];
  return value;
}

/// Parses one tensor's header entry; `context` prefixes errors ("FILE: tensor X").
SafetensorsEntry parseEntry(const nlohmann::json &json, const std::string &context,
                            uint64_t dataBytes) {
  auto bad = [&](const std::string &what) {
    return SafetensorsError(context + ": bad header: " + what);
  };
  if (!json.is_object())
    throw bad("entry is not a JSON object");
  auto dtype = json.find("dtype");
  auto shape = json.find("shape");
  auto offsets = json.find("data_offsets");
  if (dtype == json.end() || !dtype->is_string())
    throw bad("missing string 'dtype'");
  if (shape == json.end() || !shape->is_array())
    throw bad("missing array 'shape'");
  if (offsets == json.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
    throw bad("'data_offsets' must be [begin, end] with non-negative integers");

  SafetensorsEntry entry;
  entry.dtype = dtype->get<std::string>();
  uint64_t numel = 1;
  for (const auto &dim : *shape) {
    if (!dim.is_number_unsigned())
      throw bad("shape dimensions must be non-negative integers");
    uint64_t size = dim.get<uint64_t>();
    if (size > uint64_t(INT64_MAX) || __builtin_mul_overflow(numel, size, &numel))
      throw bad("shape " + shape->dump() + " is too large");
    entry.shape.push_back(int64_t(size));
  }
  entry.dataBegin = (*offsets)[0].get<uint64_t>();
  entry.dataEnd = (*offsets)[1].get<uint64_t>();
  if (entry.dataBegin > entry.dataEnd)
    throw bad("data_offsets begin " + std::to_string(entry.dataBegin) + " is after end " +
              std::to_string(entry.dataEnd));
  uint64_t elementBytes = dtypeBytes(entry.dtype);
  uint64_t expectedBytes = 0;
  const bool beyondBytes =
      elementBytes != 0 && __builtin_mul_overflow(numel, elementBytes, &expectedBytes);
  if (elementBytes != 0 && (beyondBytes || expectedBytes != entry.dataEnd - entry.dataBegin))
    throw bad("data_offsets span " + std::to_string(entry.dataEnd - entry.dataBegin) +
              " bytes, but " + entry.dtype + " " + formatShape(entry.shape) + " needs " +
              (beyondBytes ? "more than 2^64" : std::to_string(expectedBytes)));
  if (entry.dataEnd > dataBytes)
    throw SafetensorsError(context + ": data ends at byte " + std::to_string(entry.dataEnd) +
                           " of the data section, but the file holds only " +
                           std::to_string(dataBytes) + " data bytes (truncated file?)");
  return entry;
}

/// The tensors must tile the data section as the format requires (and the reference
/// implementation checks): ordered by offset, the first at byte 0, each beginning where the
/// previous ends, the last ending at the end of the file. An overlap would let two
/// parameters share bytes; a gap or trailing bytes mean a header that does not describe
/// the file.
void checkDataLayout(const std::string &path,
                     const std::map<std::string, SafetensorsEntry> &entries, uint64_t dataBytes) {
  std::vector<std::pair<std::string, const SafetensorsEntry *>> byOffset;
  for (const auto &[name, entry] : entries)
    byOffset.push_back({name, &entry});
  std::stable_sort(byOffset.begin(), byOffset.end(), [](const auto &a, const auto &b) {
    return std::pair(a.second->dataBegin, a.second->dataEnd) <
           std::pair(b.second->dataBegin, b.second->dataEnd);
  });
  auto range = [](const SafetensorsEntry &entry) {
    return "[" + std::to_string(entry.dataBegin) + ", " + std::to_string(entry.dataEnd) + "]";
  };
  uint64_t covered = 0; // the data section's bytes [0, covered) belong to earlier tensors
  const std::string *previous = nullptr;
  for (const auto &[name, entry] : byOffset) {
    std::string where = path + ": tensor " + name + ": bad header: data_offsets " + range(*entry);
    if (entry->dataBegin < covered)
      throw SafetensorsError(where + " overlap tensor " + *previous + "'s " +
                             range(entries.at(*previous)));
    if (entry->dataBegin > covered)
      throw SafetensorsError(where + " leave bytes [" + std::to_string(covered) + ", " +
                             std::to_string(entry->dataBegin) + ") of the data section unused" +
                             (previous ? " (after tensor " + *previous + ")" : ""));
    covered = entry->dataEnd;
    previous = &name;
  }
  if (covered != dataBytes)
    throw SafetensorsError(path + ": bad header: " + std::to_string(dataBytes - covered) +
                           " bytes follow the last tensor" +
                           (previous ? ", " + *previous + "," : "") +
                           " in the data section (the tensors end at byte " +
                           std::to_string(covered) + " of " + std::to_string(dataBytes) + ")");
}

} // namespace

SafetensorsReader::SafetensorsReader(const std::string &path) : path_(path) {
  requireInputFile<SafetensorsError>(path);
  file_.open(path, std::ios::binary);
  if (!file_)
    throw SafetensorsError(path + ": cannot open: " + std::strerror(errno));
  file_.seekg(0, std::ios::end);
  uint64_t fileBytes = uint64_t(file_.tellg());
  file_.seekg(0);
  unsigned char lengthBytes[8];
  if (fileBytes < 8 || !file_.read(reinterpret_cast<char *>(lengthBytes), 8))
    throw SafetensorsError(path + ": truncated file: " + std::to_string(fileBytes) +
                           " bytes, fewer than the 8-byte header length");
  uint64_t headerBytes = readLittleEndian64(lengthBytes);
  if (headerBytes > kMaxHeaderBytes)
    throw SafetensorsError(path + ": bad header: header length " + std::to_string(headerBytes) +
                           " exceeds the 100 MB limit");
  if (headerBytes > fileBytes - 8)
    throw SafetensorsError(path + ": truncated file: the header claims " +
                           std::to_string(headerBytes) + " bytes but only " +
                           std::to_string(fileBytes - 8) + " follow");
  std::string headerText(headerBytes, '\0');
  file_.read(headerText.data(), std::streamsize(headerBytes));
  if (!file_)
    throw SafetensorsError(path + ": truncated file: cannot read the header");
  dataStart_ = 8 + headerBytes;

  if (std::optional<JsonLimitIssue> issue = findJsonLimitIssue(headerText)) {
    const std::string &key = issue->topLevelKey;
    std::string tensor = key.empty() || key == "__metadata__" ? "" : ": tensor " + key;
    throw SafetensorsError(path + tensor + ": bad header: " + issue->what + " (header line " +
                           std::to_string(issue->line) + ", column " +
                           std::to_string(issue->column) + ")");
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(headerText);
  } catch (const nlohmann::json::exception &error) {
    throw SafetensorsError(path + ": bad header: invalid JSON: " + jsonParseMessage(error));
  }
  if (!header.is_object())
    throw SafetensorsError(path + ": bad header: not a JSON object");
  for (const auto &[name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object())
        throw SafetensorsError(path + ": bad header: __metadata__ is not an object");
      for (const auto &[key, text] : value.items()) {
        if (!text.is_string())
          throw SafetensorsError(path + ": bad header: __metadata__." + key + " is not a string");
        metadata_[key] = text.get<std::string>();
      }
      continue;
    }
    entries_[name] = parseEntry(value, path + ": tensor " + name, fileBytes - dataStart_);
  }
  checkDataLayout(path, entries_, fileBytes - dataStart_);
}

const SafetensorsEntry &SafetensorsReader::entryOf(const std::string &name,
                                                   const std::vector<int64_t> &expectedShape,
                                                   const std::string &context) const {
  auto found = entries_.find(name);
  if (found == entries_.end())
    throw SafetensorsError(context + ": not found (the file holds " +
                           std::to_string(entries_.size()) + " tensors)");
  const SafetensorsEntry &entry = found->second;
  if (entry.shape != expectedShape)
    throw SafetensorsError(context + ": file has " + formatShape(entry.shape) + ", model expects " +
                           formatShape(expectedShape));
  return entry;
}

void SafetensorsReader::readBytes(const SafetensorsEntry &entry, char *out, uint64_t bytes,
                                  const std::string &context) {
  file_.clear();
  file_.seekg(std::streamoff(dataStart_ + entry.dataBegin));
  if (!file_.read(out, std::streamsize(bytes)))
    throw SafetensorsError(context + ": read failed (truncated file?)");
}

void SafetensorsReader::readU8(const std::string &name, const std::vector<int64_t> &expectedShape,
                               uint8_t *out) {
  std::string context = path_ + ": tensor " + name;
  const SafetensorsEntry &entry = entryOf(name, expectedShape, context);
  if (entry.dtype != "U8")
    throw SafetensorsError(context + ": dtype " + entry.dtype + " where U8 is expected");
  readBytes(entry, reinterpret_cast<char *>(out), entry.dataEnd - entry.dataBegin, context);
}

void SafetensorsReader::readF32(const std::string &name, const std::vector<int64_t> &expectedShape,
                                float *out) {
  std::string context = path_ + ": tensor " + name;
  const SafetensorsEntry &entry = entryOf(name, expectedShape, context);
  bool isF32 = entry.dtype == "F32";
  if (!isF32 && entry.dtype != "BF16" && entry.dtype != "F16")
    throw SafetensorsError(context + ": dtype " + entry.dtype +
                           " is not supported (F32, BF16 or F16)");

  uint64_t bytes = entry.dataEnd - entry.dataBegin;
  uint64_t numel = bytes / (isF32 ? 4 : 2);
  // 16-bit data is read into the upper half of `out` and widened front to back: element i's
  // fp32 bytes [4i, 4i+4) never reach a 16-bit element j > i at [2n+2j, 2n+2j+2).
  char *destination = reinterpret_cast<char *>(out) + (isF32 ? 0 : bytes);
  readBytes(entry, destination, bytes, context);
  if (isF32)
    return;
  bool isBf16 = entry.dtype == "BF16";
  for (uint64_t i = 0; i < numel; ++i) {
    uint16_t bits;
    std::memcpy(&bits, destination + 2 * i, sizeof bits);
    out[i] = isBf16 ? bf16ToFloat(bits) : f16ToFloat(bits);
  }
}

void writeSafetensors(const std::string &path, const std::vector<TensorToWrite> &tensors,
                      const std::map<std::string, std::string> &metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  std::vector<uint64_t> sizes;
  for (const TensorToWrite &tensor : tensors) {
    if (!names.insert(tensor.name).second)
      throw SafetensorsError(path + ": tensor " + tensor.name + ": written twice");
    if (tensor.dtype != "F32" && tensor.dtype != "BF16" && tensor.dtype != "F16" &&
        tensor.dtype != "U8")
      throw SafetensorsError(path + ": tensor " + tensor.name + ": cannot write dtype " +
                             tensor.dtype + " (F32, BF16, F16 or U8)");
    uint64_t bytes = dtypeBytes(tensor.dtype);
    for (int64_t dim : tensor.shape)
      bytes *= uint64_t(dim);
    header[tensor.name] = {{"dtype", tensor.dtype},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    sizes.push_back(bytes);
  }
  std::string headerText = header.dump();
  // The reference writer pads the header with spaces so the data section is 8-byte aligned.
  headerText.append((8 - headerText.size() % 8) % 8, ' ');

  writeFileAtomically(path, [&](const std::string &temporary) {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file)
      throw SafetensorsError(temporary + ": cannot create: " + std::strerror(errno));
    unsigned char lengthBytes[8];
    for (int i = 0; i < 8; ++i)
      lengthBytes[i] = (uint64_t(headerText.size()) >> (8 * i)) & 0xFFu;
    file.write(reinterpret_cast<const char *>(lengthBytes), 8);
    file.write(headerText.data(), std::streamsize(headerText.size()));
    for (size_t i = 0; i < tensors.size(); ++i)
      file.write(static_cast<const char *>(tensors[i].data), std::streamsize(sizes[i]));
    file.close();
    if (!file)
      throw SafetensorsError(temporary + ": write failed (disk full?)");
  });
}

} // namespace bertc
