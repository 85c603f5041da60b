// Fuzzes the safetensors reader: any bytes as a .safetensors file. A header the reader
// accepts must describe the file exactly, so that every F32/BF16/F16 tensor it lists reads
// back at its own shape, and the wrong shape or name is refused with SafetensorsError.

#include "fuzz_files.h"

#include "bertc/runtime/safetensors.h"

#include <optional>
#include <vector>

namespace {

bool readable(const std::string &dtype) {
  return dtype == "F32" || dtype == "BF16" || dtype == "F16";
}

/// Calls readF32 where it must throw SafetensorsError (nothing may be written to `out`).
void expectRefused(bertc::SafetensorsReader &reader, const std::string &name,
                   const std::vector<int64_t> &shape) {
  try {
    reader.readF32(name, shape, nullptr);
  } catch (const bertc::SafetensorsError &) {
    return;
  }
  __builtin_trap();
}

void readEveryTensor(bertc::SafetensorsReader &reader) {
  for (const auto &[name, entry] : reader.entries()) {
    std::vector<int64_t> wrongShape = entry.shape;
    wrongShape.push_back(2);
    expectRefused(reader, name, wrongShape);
    if (!readable(entry.dtype)) {
      expectRefused(reader, name, entry.shape);
      continue;
    }
    // The reader checked that these bytes lie in the file: the buffer is at most its size.
    uint64_t elements = 1;
    for (int64_t dim : entry.shape)
      elements *= uint64_t(dim);
    std::vector<float> values(elements);
    reader.readF32(name, entry.shape, values.data());
  }
  if (!reader.contains("no.such.tensor"))
    expectRefused(reader, "no.such.tensor", {1});
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = bertc::fuzz::writeInputFile(data, size, "model.safetensors");
  std::optional<bertc::SafetensorsReader> reader;
  try {
    reader.emplace(path);
  } catch (const bertc::SafetensorsError &) {
    return 0;
  }
  readEveryTensor(*reader);
  return 0;
}
