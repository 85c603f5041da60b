#include "bertc/runtime/torch_checkpoint.h"

#include "bertc/runtime/input_files.h"

#include "half_floats.h"
#include "shape_text.h"
#include "torch_pickle.h"
#include "zip_entries.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace bertc {

namespace {

/// A zip archive's first local header: torch.save's format since 1.6.
constexpr char kZipStart[] = {'P', 'K', '\x03', '\x04'};

/// Bytes an element of `dtype` (the storage classes' dtypes, torch_pickle.cpp) takes.
int64_t elementBytes(const std::string &dtype) {
  if (dtype == "C128")
    return 16;
  if (dtype == "F64" || dtype == "I64" || dtype == "C64")
    return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "Q32")
    return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16")
    return 2;
  return 1;
}

/// torch.save's older format starts with a pickle's PROTO (2 by default, up to 5).
bool isLegacyStart(const std::string &start) {
  return start.size() >= 2 && start[0] == '\x80' && start[1] >= 2 && start[1] <= 5;
}

/// The first 4 bytes of `file`, or "" when it is shorter.
std::string startOf(std::istream &file) {
  std::string start(4, '\0');
  file.seekg(0);
  file.read(start.data(), 4);
  return file ? start : "";
}

} // namespace

bool looksLikeTorchCheckpoint(const std::string &path) {
  int fd = openInputFile<TorchCheckpointError>(path);
  std::string start(4, '\0');
  ssize_t read = ::pread(fd, start.data(), 4, 0);
  ::close(fd);
  return read == 4 && (isLegacyStart(start) || start.compare(0, 4, kZipStart, 4) == 0);
}

TorchCheckpointReader::TorchCheckpointReader(const std::string &path) : path_(path) {
  requireInputFile<TorchCheckpointError>(path);
  file_.open(path, std::ios::binary);
  if (!file_)
    throw TorchCheckpointError(path + ": cannot open: " + std::strerror(errno));
  std::string start = startOf(file_);
  if (start.compare(0, 4, kZipStart, 4) == 0)
    openZip();
  else if (isLegacyStart(start))
    openLegacy();
  else
    throw TorchCheckpointError(path + ": not a PyTorch checkpoint (neither a zip archive nor "
                                      "torch.save's older format)");
}

/// torch 1.6 and newer: a zip of ARCHIVE/data.pkl and one ARCHIVE/data/KEY per storage.
void TorchCheckpointReader::openZip() {
  std::map<std::string, ZipEntry> entries = readZipEntries(file_, path_);
  auto pickle = std::find_if(entries.begin(), entries.end(), [](const auto &entry) {
    const std::string &name = entry.first;
    return name.size() >= 9 && name.compare(name.size() - 9, 9, "/data.pkl") == 0;
  });
  if (pickle == entries.end())
    throw TorchCheckpointError(path_ + ": a zip archive without data.pkl: not a torch.save file");
  std::string archive = pickle->first.substr(0, pickle->first.size() - 8); // "NAME/"
  if (!pickle->second.stored)
    throw TorchCheckpointError(path_ + ": data.pkl is compressed, which torch.save never does");
  file_.clear();
  file_.seekg(std::streamoff(pickle->second.offset));
  tensors_ = unpickleStateDict(file_, pickle->second.offset + pickle->second.bytes, path_).tensors;
  for (const auto &[name, tensor] : tensors_) {
    auto found = entries.find(archive + "data/" + tensor.storageKey);
    if (found == entries.end() || !found->second.stored)
      throw TorchCheckpointError(path_ + ": tensor " + name + ": its storage data/" +
                                 tensor.storageKey + " is " +
                                 (found == entries.end() ? "missing" : "compressed"));
    storages_[tensor.storageKey] = {found->second.offset, found->second.bytes};
  }
}

/// Before torch 1.6: pickles of a magic number, the protocol, the system's sizes and the
/// state dict, then a pickled list of storage keys and each storage in that order, as its
/// element count (8 bytes, little-endian) and its bytes.
void TorchCheckpointReader::openLegacy() {
  file_.seekg(0, std::ios::end);
  uint64_t fileBytes = uint64_t(file_.tellg());
  file_.seekg(0);
  for (int header = 0; header < 3; ++header)
    skipPickle(file_, fileBytes, path_);
  PickledStateDict pickled = unpickleStateDict(file_, fileBytes, path_);
  tensors_ = std::move(pickled.tensors);
  const std::map<std::string, std::string> &dtypes = pickled.storageDtypes;
  for (const std::string &key : unpickleStrings(file_, fileBytes, path_)) {
    unsigned char count[8];
    if (!file_.read(reinterpret_cast<char *>(count), 8))
      throw TorchCheckpointError(path_ + ": storage " + key + ": truncated file");
    uint64_t elements = 0;
    for (int i = 7; i >= 0; --i)
      elements = elements << 8 | count[i];
    auto dtype = dtypes.find(key);
    if (dtype == dtypes.end() || dtype->second.empty())
      throw TorchCheckpointError(path_ + ": storage " + key + ": " +
                                 (dtype == dtypes.end() ? "the pickle does not name it"
                                                        : "of a type whose size is not known"));
    uint64_t offset = uint64_t(file_.tellg()), bytes;
    if (__builtin_mul_overflow(elements, uint64_t(elementBytes(dtype->second)), &bytes) ||
        offset > fileBytes || bytes > fileBytes - offset)
      throw TorchCheckpointError(path_ + ": storage " + key + ": truncated file");
    storages_[key] = {offset, bytes};
    file_.seekg(std::streamoff(offset + bytes));
  }
  for (const auto &[name, tensor] : tensors_)
    if (!storages_.count(tensor.storageKey))
      throw TorchCheckpointError(path_ + ": tensor " + name + ": its storage " + tensor.storageKey +
                                 " is missing");
}

void TorchCheckpointReader::readF32(const std::string &name,
                                    const std::vector<int64_t> &expectedShape, float *out) {
  std::string context = path_ + ": tensor " + name;
  auto found = tensors_.find(name);
  if (found == tensors_.end())
    throw TorchCheckpointError(context + ": not found (the file holds " +
                               std::to_string(tensors_.size()) + " tensors)");
  const TorchTensor &tensor = found->second;
  if (tensor.shape != expectedShape)
    throw TorchCheckpointError(context + ": file has " + formatShape(tensor.shape) +
                               ", model expects " + formatShape(expectedShape));
  if (tensor.dtype != "F32" && tensor.dtype != "F16" && tensor.dtype != "BF16")
    throw TorchCheckpointError(context + ": dtype " +
                               (tensor.dtype.empty() ? "unknown" : tensor.dtype) +
                               " is not supported (F32, BF16 or F16)");
  // The storage elements the view reaches: `span` from storageOffset, the last one at
  // sum (size - 1) * stride; every step checked, the strides being the file's word.
  uint64_t count = 1, reach = 0;
  bool contiguous = true, overflow = tensor.storageOffset < 0;
  for (size_t d = tensor.shape.size(); d-- > 0;) {
    if (tensor.shape[d] == 0)
      return;
    uint64_t size = uint64_t(tensor.shape[d]), stride = uint64_t(tensor.stride[d]), step;
    overflow |= tensor.stride[d] < 0 || __builtin_mul_overflow(size - 1, stride, &step) ||
                __builtin_add_overflow(reach, step, &reach);
    contiguous &= size == 1 || stride == count;
    count *= size; // the model's shape: no overflow
  }
  const StorageBytes &storage = storages_.at(tensor.storageKey);
  uint64_t width = uint64_t(elementBytes(tensor.dtype)), first = uint64_t(tensor.storageOffset);
  uint64_t span = reach + 1, end;
  overflow |= __builtin_add_overflow(first, span, &end) || __builtin_mul_overflow(end, width, &end);
  if (overflow || end > storage.bytes)
    throw TorchCheckpointError(context + ": its view runs past its storage");
  std::vector<char> bytes(span * width);
  file_.clear();
  file_.seekg(std::streamoff(storage.offset + first * width));
  if (!file_.read(bytes.data(), std::streamsize(bytes.size())))
    throw TorchCheckpointError(context + ": read failed (truncated file?)");
  auto element = [&](uint64_t at) -> float {
    const char *source = bytes.data() + at * width;
    if (width == 4) {
      float value;
      std::memcpy(&value, source, 4);
      return value;
    }
    uint16_t bits;
    std::memcpy(&bits, source, 2);
    return tensor.dtype == "BF16" ? bf16ToFloat(bits) : f16ToFloat(bits);
  };
  // Element i of the row-major result is at sum(index_d * stride_d) past the view's start.
  std::vector<int64_t> index(tensor.shape.size(), 0);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t at = 0;
    if (contiguous) {
      at = i;
    } else {
      for (size_t d = 0; d < index.size(); ++d)
        at += uint64_t(index[d] * tensor.stride[d]);
      for (size_t d = index.size(); d-- > 0 && ++index[d] == tensor.shape[d];)
        index[d] = 0;
    }
    out[i] = element(at);
  }
}

} // namespace bertc
