// Fuzzes the pre-tokenized JSONL reader: any bytes as rows of input_ids, token_type_ids and
// a label, read as class labels and as regression targets. Only DataError may come out.

#include "fuzz_files.h"

#include "bertc/runtime/jsonl_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = bertc::fuzz::writeInputFile(data, size, "train.jsonl");
  for (int64_t labels : {3, 1}) {
    try {
      bertc::Dataset rows = bertc::loadJsonlDataset(path, {16, labels, 64, 2});
      (void)bertc::datasetFingerprint(rows);
    } catch (const bertc::DataError &) {
    }
  }
  return 0;
}
