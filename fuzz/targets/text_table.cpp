// Fuzzes the text tables: the first byte picks CSV, TSV or JSONL, the rest is the file. Every
// field is read every way a caller reads one, then the file is tokenized as training data
// (single texts and pairs, class labels and regression targets). Only DataError and
// TokenizerError may come out.

#include "fuzz_files.h"

#include "bertc/runtime/text_dataset.h"
#include "bertc/runtime/text_table.h"
#include "bertc/runtime/tokenizer.h"

namespace {

/// Calls `read`, accepting the errors a bad field is reported with.
template <class Read> void tryRead(Read read) {
  try {
    read();
  } catch (const bertc::DataError &) {
  }
}

void readEveryField(const std::string &path) {
  bertc::TextTable table = bertc::loadTextTable(path);
  tryRead([&] { table.column("label"); });
  for (size_t row = 0; row < table.size(); ++row) {
    (void)table.where(row);
    for (size_t column = 0; column < table.columns().size(); ++column) {
      tryRead([&] { table.text(row, column); });
      tryRead([&] { table.ids(row, column); });
      tryRead([&] { table.intLabel(row, column, 3); });
      tryRead([&] { table.floatLabel(row, column); });
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  static const char *const kNames[] = {"train.csv", "train.tsv", "train.jsonl"};
  std::string path = bertc::fuzz::writeInputFile(data + 1, size - 1, kNames[data[0] % 3]);
  try {
    readEveryField(path);
  } catch (const bertc::DataError &) {
  }
  for (const bertc::TextFields &fields :
       {bertc::TextFields{"sentence", "", "label"}, bertc::TextFields{"sentence", "pair", "label"}})
    for (int64_t labels : {2, 1}) {
      try {
        (void)bertc::loadTrainingData(path, {16, labels, 64, 2}, fields,
                                      {bertc::fuzz::sampleVocabPath()});
      } catch (const bertc::DataError &) {
      } catch (const bertc::TokenizerError &) {
      }
    }
  return 0;
}
