// Fuzzes the PyTorch checkpoint reader: any bytes as a pytorch_model.bin (torch.save's zip or
// older format; the seeds are both). A state dict the reader accepts must read back: every
// F32/F16/BF16 tensor at its own shape (or be refused as a view past its storage), and the
// wrong shape, another dtype or an absent name refused with TorchCheckpointError.

#include "fuzz_files.h"

#include "bertc/runtime/torch_checkpoint.h"

#include <optional>
#include <vector>

namespace {

/// Calls readF32 where it must throw TorchCheckpointError (nothing may be written to `out`).
void expectRefused(bertc::TorchCheckpointReader &reader, const std::string &name,
                   const std::vector<int64_t> &shape) {
  try {
    reader.readF32(name, shape, nullptr);
  } catch (const bertc::TorchCheckpointError &) {
    return;
  }
  __builtin_trap();
}

/// The elements a shape holds, or 0 when a dimension is negative or the count is more than
/// a fuzz input may ask to allocate.
uint64_t elementsOf(const std::vector<int64_t> &shape) {
  uint64_t elements = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(elements, uint64_t(dim), &elements) ||
        elements > (uint64_t(1) << 24))
      return 0;
  return elements;
}

void readEveryTensor(bertc::TorchCheckpointReader &reader) {
  for (const auto &[name, tensor] : reader.entries()) {
    std::vector<int64_t> wrongShape = tensor.shape;
    wrongShape.push_back(2);
    expectRefused(reader, name, wrongShape);
    bool readable = tensor.dtype == "F32" || tensor.dtype == "F16" || tensor.dtype == "BF16";
    if (!readable) {
      expectRefused(reader, name, tensor.shape);
      continue;
    }
    uint64_t elements = elementsOf(tensor.shape);
    if (elements == 0)
      continue;
    std::vector<float> values(elements);
    try {
      reader.readF32(name, tensor.shape, values.data());
    } catch (const bertc::TorchCheckpointError &) {
      // A view past its storage, or a read past the file's end.
    }
  }
  if (!reader.contains("no.such.tensor"))
    expectRefused(reader, "no.such.tensor", {1});
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = bertc::fuzz::writeInputFile(data, size, "pytorch_model.bin");
  std::optional<bertc::TorchCheckpointReader> reader;
  try {
    reader.emplace(path);
  } catch (const bertc::TorchCheckpointError &) {
    return 0;
  }
  readEveryTensor(*reader);
  return 0;
}
