// The entries of a zip archive as torch.save writes them: stored, not compressed, so each
// entry's bytes can be read in place. Reads the central directory (ZIP64 included) and each
// entry's local header, which gives where its data begins.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>

namespace bertc {

struct ZipEntry {
  uint64_t offset = 0; ///< of the entry's data in the file
  uint64_t bytes = 0;
  bool stored = true; ///< false when compressed (not read in place)
};

/// The entries of the zip archive open in `file` (`path` for messages), by name; throws
/// TorchCheckpointError when it is not one or is truncated.
std::map<std::string, ZipEntry> readZipEntries(std::ifstream &file, const std::string &path);

} // namespace bertc
