// Fuzzes model.safetensors.index.json: any bytes parsed as a sharded checkpoint's index. An
// index that parses must write back (as transformers writes it) to text that parses to the
// same index, and every shard it names must be a file name beside it. Only
// SafetensorsError may come out.

#include "fuzz_files.h"

#include "bertc/runtime/safetensors_shards.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  bertc::SafetensorsIndex index;
  try {
    index = bertc::parseSafetensorsIndex(text, "model.safetensors.index.json");
  } catch (const bertc::SafetensorsError &) {
    return 0;
  }
  for (const auto &[tensor, shard] : index.weightMap)
    if (shard.empty() || shard == "." || shard == ".." ||
        shard.find_first_of(std::string("/\0", 2)) != std::string::npos)
      __builtin_trap();
  std::string written = bertc::formatSafetensorsIndex(index);
  bertc::SafetensorsIndex back = bertc::parseSafetensorsIndex(written, "written.json");
  if (back.totalSize != index.totalSize || back.weightMap != index.weightMap)
    __builtin_trap();
  return 0;
}
