// Reading and writing checkpoints in the safetensors format (Hugging Face): an 8-byte
// little-endian header length, a JSON header mapping each tensor name to its dtype, shape and
// byte range, then the raw tensor bytes. The runtime reads F32, BF16 and F16 (converted to
// fp32) and U8 (8-bit optimizer state), and writes F32 and U8; every error names the file
// and, where there is one, the tensor.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace bertc {

/// A malformed, truncated or mismatching safetensors file; what() names the file and tensor.
class SafetensorsError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One tensor as the header describes it.
struct SafetensorsEntry {
  std::string dtype; ///< "F32", "BF16", "F16", ... as written in the file
  std::vector<int64_t> shape;
  uint64_t dataBegin; ///< byte range relative to the start of the data section
  uint64_t dataEnd;
};

/// An open safetensors file: the header is parsed and checked on construction, tensor data
/// is read on demand straight into the caller's memory (no intermediate copies).
class SafetensorsReader {
public:
  /// Opens `path` and validates the header; throws SafetensorsError.
  explicit SafetensorsReader(const std::string &path);

  const std::string &path() const { return path_; }
  /// Whether the file holds a tensor called `name`.
  bool contains(const std::string &name) const { return entries_.count(name) != 0; }
  /// Every tensor in the file, by name.
  const std::map<std::string, SafetensorsEntry> &entries() const { return entries_; }
  /// The optional `__metadata__` string map.
  const std::map<std::string, std::string> &metadata() const { return metadata_; }

  /// Reads tensor `name` into `out` (as many floats as `expectedShape` holds), converting
  /// BF16/F16 to fp32. Throws when the tensor is missing, its shape differs from
  /// `expectedShape`, or its dtype is not F32/BF16/F16.
  void readF32(const std::string &name, const std::vector<int64_t> &expectedShape, float *out);
  /// Reads the U8 tensor `name` into `out` (as many bytes as `expectedShape` holds). Throws
  /// when the tensor is missing, its shape differs from `expectedShape`, or it is not U8.
  void readU8(const std::string &name, const std::vector<int64_t> &expectedShape, uint8_t *out);

private:
  /// The entry of `name` with `expectedShape`, or a SafetensorsError naming `context`.
  const SafetensorsEntry &entryOf(const std::string &name,
                                  const std::vector<int64_t> &expectedShape,
                                  const std::string &context) const;
  /// Reads `bytes` bytes of `entry`'s data into `out`.
  void readBytes(const SafetensorsEntry &entry, char *out, uint64_t bytes,
                 const std::string &context);

  std::string path_;
  std::ifstream file_;
  uint64_t dataStart_ = 0; ///< file offset of the data section
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

/// Bytes per element of the dtypes the format defines; 0 for a name it does not define.
uint64_t dtypeBytes(const std::string &dtype);

/// A named tensor to write; `data` holds the product of `shape` values of `dtype`, "F32"
/// (floats), "BF16" or "F16" (their 16-bit patterns) or "U8" (bytes).
struct TensorToWrite {
  std::string name;
  std::vector<int64_t> shape;
  const void *data;
  std::string dtype = "F32";
};

/// Writes `tensors` in the given order, with `metadata` as `__metadata__` (omitted when
/// empty). Atomic (writeFileAtomically in save_files.h): readers see the previous file or the
/// whole new one. Throws SafetensorsError or SaveError.
void writeSafetensors(const std::string &path, const std::vector<TensorToWrite> &tensors,
                      const std::map<std::string, std::string> &metadata = {});

} // namespace bertc
