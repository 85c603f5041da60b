// The scratch folder and the sample vocabulary of the fuzz targets (fuzz_files.h).

#include "fuzz_files.h"

#include <cstdio>
#include <cstdlib> // mkdtemp
#include <filesystem>
#include <stdexcept>

namespace bertc::fuzz {

namespace {

void writeFile(const std::string &path, const void *data, size_t size) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size || std::fclose(file) != 0)
    throw std::runtime_error("fuzz: cannot write " + path);
}

const char kSampleVocab[] = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n"
                            "the\nquick\nbrown\nfox\nred\nblue\nwhat\nfollows\nun\n##aff\n"
                            "##able\n##s\n##ing\na\nb\nc\n##a\n##b\n.\n,\n!\n?\n'\n-\n"
                            "caf\n##e\n\xc3\xa9\n\xe4\xb8\xad\n\xe6\x96\x87\nThe\nEU\n";

/// A folder that goes with the process (when it exits normally).
struct ScratchFolder {
  std::string path;
  ~ScratchFolder() { std::filesystem::remove_all(path); }
};

} // namespace

const std::string &scratchFolder() {
  static const ScratchFolder folder = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "bertc-fuzz-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("fuzz: cannot create a folder like " + pattern);
    return ScratchFolder{pattern};
  }();
  return folder.path;
}

std::string writeInputFile(const uint8_t *data, size_t size, const std::string &name) {
  std::string path = scratchFolder() + "/" + name;
  writeFile(path, data, size);
  return path;
}

const std::string &sampleVocabPath() {
  static const std::string path = [] {
    std::string vocab = scratchFolder() + "/sample-vocab.txt";
    writeFile(vocab, kSampleVocab, sizeof kSampleVocab - 1);
    return vocab;
  }();
  return path;
}

} // namespace bertc::fuzz
