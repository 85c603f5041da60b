// Fuzzes the token-classification reader: any bytes as JSONL rows of words and tags, each
// word tokenized with the sample vocabulary. Only DataError and TokenizerError may come out.

#include "fuzz_files.h"

#include "bertc/runtime/task_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = bertc::fuzz::writeInputFile(data, size, "train.jsonl");
  try {
    (void)bertc::loadTaskData(bertc::TaskKind::TokenClassification, path, {16, 5, 64, 2},
                              {{"tokens", "", "ner_tags"}, {bertc::fuzz::sampleVocabPath()}});
  } catch (const bertc::DataError &) {
  } catch (const bertc::TokenizerError &) {
  }
  return 0;
}
