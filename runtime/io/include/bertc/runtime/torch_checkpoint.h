// Reading PyTorch's checkpoint files (torch.save, Hugging Face's pytorch_model.bin) without
// running them: the zip format of torch 1.6 and newer and the older single-stream one. The
// pickle inside is interpreted, not executed: only what torch.save writes for a state dict
// of tensors is accepted (an OrderedDict of name to tensor, each tensor a view of a typed
// storage), any other call is an error. Tensors of F32, F16 and BF16 storages are read,
// converted to fp32; every error names the file and, where there is one, the tensor.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace bertc {

/// A malformed, truncated or unsupported PyTorch checkpoint; what() names the file.
class TorchCheckpointError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One tensor of the state dict: a strided view of a storage, in elements.
struct TorchTensor {
  std::string dtype;      ///< the storage's, safetensors' names: "F32", "F16", "BF16", "I64", ...
  std::string storageKey; ///< which storage (the zip's data/KEY)
  int64_t storageOffset = 0;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
};

/// Whether `path` starts as a PyTorch checkpoint does (a zip archive or the older format).
/// Throws TorchCheckpointError when it cannot be opened or is not a regular file.
bool looksLikeTorchCheckpoint(const std::string &path);

/// An open PyTorch checkpoint: the state dict's pickle is read on construction, tensor data
/// on demand.
class TorchCheckpointReader {
public:
  /// Opens `path`; throws TorchCheckpointError.
  explicit TorchCheckpointReader(const std::string &path);

  bool contains(const std::string &name) const { return tensors_.count(name) != 0; }
  /// Every tensor of the state dict, by name.
  const std::map<std::string, TorchTensor> &entries() const { return tensors_; }
  /// Reads tensor `name` into `out` (as many floats as `expectedShape` holds), converting
  /// F16/BF16 to fp32 and gathering a non-contiguous view. Throws when the tensor is
  /// missing, its shape differs, its dtype is not F32/F16/BF16 or its view leaves its storage.
  void readF32(const std::string &name, const std::vector<int64_t> &expectedShape, float *out);

private:
  /// Where a storage's bytes lie in the file.
  struct StorageBytes {
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };
  void openZip();
  void openLegacy();

  std::string path_;
  std::ifstream file_;
  std::map<std::string, TorchTensor> tensors_;
  std::map<std::string, StorageBytes> storages_;
};

} // namespace bertc
