#include "zip_entries.h"

#include "bertc/runtime/torch_checkpoint.h"

#include <algorithm>
#include <vector>

namespace bertc {

namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint16_t kZip64Extra = 0x0001;

/// Little-endian fields of a byte buffer, bounds-checked.
class Fields {
public:
  Fields(std::vector<char> bytes, const std::string &path)
      : bytes_(std::move(bytes)), path_(path) {}
  uint64_t get(size_t at, int width) const {
    if (at + size_t(width) > bytes_.size())
      throw TorchCheckpointError(path_ + ": truncated zip directory");
    uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i)
      value = value << 8 | uint8_t(bytes_[at + size_t(i)]);
    return value;
  }
  std::string text(size_t at, size_t length) const {
    if (at + length > bytes_.size())
      throw TorchCheckpointError(path_ + ": truncated zip directory");
    return std::string(bytes_.data() + at, length);
  }
  size_t size() const { return bytes_.size(); }

private:
  std::vector<char> bytes_;
  std::string path_;
};

Fields readAt(std::ifstream &file, uint64_t offset, uint64_t length, const std::string &path) {
  std::vector<char> bytes(length);
  file.clear();
  file.seekg(std::streamoff(offset));
  if (!file.read(bytes.data(), std::streamsize(length)))
    throw TorchCheckpointError(path + ": truncated zip archive");
  return Fields(std::move(bytes), path);
}

} // namespace

std::map<std::string, ZipEntry> readZipEntries(std::ifstream &file, const std::string &path) {
  file.clear();
  file.seekg(0, std::ios::end);
  uint64_t fileBytes = uint64_t(file.tellg());
  // The end-of-directory record: 22 bytes and a comment of up to 65535, at the end.
  uint64_t tailBytes = std::min<uint64_t>(fileBytes, 22 + 65535);
  Fields tail = readAt(file, fileBytes - tailBytes, tailBytes, path);
  int64_t end = int64_t(tailBytes) - 22;
  while (end >= 0 && tail.get(size_t(end), 4) != kEndOfDirectory)
    --end;
  if (end < 0)
    throw TorchCheckpointError(path + ": not a zip archive (no end of central directory)");
  uint64_t count = tail.get(size_t(end) + 10, 2);
  uint64_t directoryBytes = tail.get(size_t(end) + 12, 4);
  uint64_t directoryOffset = tail.get(size_t(end) + 16, 4);
  if (count == 0xFFFF || directoryOffset == 0xFFFFFFFF) {
    if (end < 20 || tail.get(size_t(end) - 20, 4) != kZip64Locator)
      throw TorchCheckpointError(path + ": ZIP64 archive without its locator");
    Fields zip64 = readAt(file, tail.get(size_t(end) - 12, 8), 56, path);
    if (zip64.get(0, 4) != kZip64EndOfDirectory)
      throw TorchCheckpointError(path + ": bad ZIP64 end of central directory");
    count = zip64.get(32, 8);
    directoryBytes = zip64.get(40, 8);
    directoryOffset = zip64.get(48, 8);
  }
  if (directoryOffset > fileBytes || directoryBytes > fileBytes - directoryOffset)
    throw TorchCheckpointError(path + ": the zip directory lies past the end of the file");
  Fields directory = readAt(file, directoryOffset, directoryBytes, path);
  std::map<std::string, ZipEntry> entries;
  size_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (directory.get(at, 4) != kDirectoryEntry)
      throw TorchCheckpointError(path + ": bad zip directory entry " + std::to_string(i));
    uint64_t method = directory.get(at + 10, 2);
    uint64_t bytes = directory.get(at + 24, 4);
    size_t nameLength = directory.get(at + 28, 2), extraLength = directory.get(at + 30, 2);
    size_t commentLength = directory.get(at + 32, 2);
    uint64_t header = directory.get(at + 42, 4);
    std::string name = directory.text(at + 46, nameLength);
    // ZIP64: the sizes and offset that did not fit 32 bits, in this order, in extra 0x0001.
    for (size_t extra = at + 46 + nameLength; extra + 4 <= at + 46 + nameLength + extraLength;) {
      uint64_t id = directory.get(extra, 2), length = directory.get(extra + 2, 2);
      if (id == kZip64Extra) {
        size_t field = extra + 4;
        if (bytes == 0xFFFFFFFF) {
          bytes = directory.get(field, 8);
          field += 8;
        }
        if (directory.get(at + 20, 4) == 0xFFFFFFFF)
          field += 8; // the compressed size
        if (header == 0xFFFFFFFF)
          header = directory.get(field, 8);
      }
      extra += 4 + length;
    }
    if (header > fileBytes || fileBytes - header < 30)
      throw TorchCheckpointError(path + ": entry " + name + " lies past the end of the file");
    Fields local = readAt(file, header, 30, path);
    if (local.get(0, 4) != kLocalHeader)
      throw TorchCheckpointError(path + ": entry " + name + ": bad local header");
    uint64_t offset = header + 30 + local.get(26, 2) + local.get(28, 2);
    if (offset > fileBytes || bytes > fileBytes - offset)
      throw TorchCheckpointError(path + ": entry " + name + " runs past the end of the file");
    entries[name] = {offset, bytes, method == 0};
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

} // namespace bertc
