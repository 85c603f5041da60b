// Fuzzes the Hugging Face config.json reader: any bytes as FOLDER/config.json, read by a job
// whose `[model] from` names FOLDER, so that the values read are range-checked as well.

#include "fuzz_files.h"
#include "quiet_context.h"

#include "bertc/frontend/TomlFrontend.h"

#include <filesystem>

namespace {

const char kJob[] = "[model]\nfrom = \"hf\"\n\n[head]\ntask = \"classification\"\nlabels = 2\n\n"
                    "[train]\nbatch = 8\nseq_len = 32\nsteps = 10\n";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string job = [] {
    std::filesystem::create_directory(bertc::fuzz::scratchFolder() + "/hf");
    return bertc::fuzz::writeInputFile(reinterpret_cast<const uint8_t *>(kJob), sizeof kJob - 1,
                                       "job.toml");
  }();
  bertc::fuzz::writeInputFile(data, size, "hf/config.json");
  (void)bertc::parseJobFile(job, bertc::fuzz::quietContext());
  return 0;
}
