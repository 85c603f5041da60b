// Fuzzes the job file reader: any bytes as model.toml through parseJobFile, which must
// report every problem as a diagnostic and never crash. A `from` key the input writes may
// point anywhere readable; the reader only reads.

#include "fuzz_files.h"
#include "quiet_context.h"

#include "bertc/frontend/TomlFrontend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = bertc::fuzz::writeInputFile(data, size, "model.toml");
  (void)bertc::parseJobFile(path, bertc::fuzz::quietContext());
  return 0;
}
