// Training data of either kind: the choice between pre-tokenized JSONL and text, and the
// encoding of text rows into Examples. Every check of the model's limits that can be made
// once (vocabulary size, token types of pairs) is made before the file is read, so that the
// per-row work is only the tokenizer's and the label's.
#include "bertc/runtime/text_dataset.h"

#include "bertc/runtime/input_files.h"
#include "bertc/runtime/task_data.h"
#include "bertc/runtime/text_table.h"
#include "bertc/runtime/tokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

namespace bertc {
namespace {

/// The extension of `path`, lower-cased, without the dot ("tsv").
std::string extensionOf(const std::string &path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return extension.empty() ? extension : extension.substr(1);
}

/// "1 row", "3 rows".
std::string rowCount(size_t rows) { return std::to_string(rows) + (rows == 1 ? " row" : " rows"); }

/// Whether the first non-blank line of the JSONL file at `path` is an object with
/// "input_ids". A line that is not JSON says no: the text reader then reports it.
bool firstRowHasInputIds(const std::string &path) {
  std::string text = readWholeFile<DataError>(path, kDataFileLimit);
  std::optional<bool> hasInputIds;
  forEachLine(text, [&](int64_t, std::string_view line) {
    if (hasInputIds || line.find_first_not_of(" \t\r") == std::string_view::npos)
      return;
    nlohmann::json row = findJsonLimitIssue(line)
                             ? nlohmann::json()
                             : nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    hasInputIds = row.is_object() && row.contains("input_ids");
  });
  return hasInputIds.value_or(false);
}

/// Whether `path` holds text rather than pre-tokenized rows (see loadTrainingData).
bool holdsText(const std::string &path) {
  std::string extension = extensionOf(path);
  if (extension == "csv" || extension == "tsv")
    return true;
  return (extension == "jsonl" || extension == "json") && !firstRowHasInputIds(path);
}

/// Whether `text` tokenizes (is UTF-8): tells which text of a pair a TokenizerError was about.
bool tokenizes(const Tokenizer &tokenizer, const std::string &text) {
  try {
    tokenizer.tokenize(text);
    return true;
  } catch (const TokenizerError &) {
    return false;
  }
}

/// Reads the text table at `path` and encodes every row:
/// 1. resolve the columns once (a missing one names the columns there are);
/// 2. per row, encode the text (or the pair) to seqLen tokens, counting the rows the
///    encoding had to cut;
/// 3. read the label: a class, or a regression target when limits.numLabels == 1.
TrainingData loadTextDataset(const std::string &path, const DataLimits &limits,
                             const TextFields &fields, const TokenizerSource &source) {
  TextTable table = loadTextTable(path); // first: a file without rows says so
  Tokenizer tokenizer = loadDataTokenizer(path, source, limits);
  bool pairs = !fields.textPair.empty();
  if (pairs && limits.typeVocab < 2)
    throw DataError(path + ": sentence pairs ('" + fields.text + "', '" + fields.textPair +
                    "') need 2 token types but the model has " + std::to_string(limits.typeVocab) +
                    " ([model] type_vocab)");
  size_t textColumn = table.column(fields.text);
  size_t pairColumn = pairs ? table.column(fields.textPair) : 0;
  size_t labelColumn = table.column(fields.label);

  bool regression = limits.numLabels == 1;
  TrainingData result{
      Dataset{path, {}, regression ? LabelKind::Target : LabelKind::Class},
      TokenizationSummary{source.vocabPath, tokenizer.settings(), limits.seqLen, 0}};
  size_t seqLen = size_t(limits.seqLen);
  auto encode = [&](size_t row) {
    const std::string &text = table.text(row, textColumn);
    try {
      return pairs ? tokenizer.encodePair(text, table.text(row, pairColumn), seqLen)
                   : tokenizer.encode(text, seqLen);
    } catch (const TokenizerError &error) {
      size_t column = pairs && tokenizes(tokenizer, text) ? pairColumn : textColumn;
      throw DataError(table.where(row) + ": '" + table.columns()[column] + "': " + error.what());
    }
  };
  result.data.rows.reserve(table.size());
  for (size_t row = 0; row < table.size(); ++row) {
    Encoding encoding = encode(row);
    result.tokenization->truncatedRows += encoding.truncated;
    Example example{std::move(encoding.inputIds), std::move(encoding.tokenTypeIds), 0};
    if (regression)
      example.target = table.floatLabel(row, labelColumn);
    else
      example.label = int32_t(table.intLabel(row, labelColumn, limits.numLabels));
    result.data.rows.push_back(std::move(example));
  }
  return result;
}

} // namespace

std::string TrainingData::summary() const {
  std::string line = "data: " + rowCount(data.rows.size()) + " from " + data.path;
  if (!tokenization)
    return line + " (pre-tokenized)";
  return line + ", tokenized with " + tokenization->vocabPath + " (" +
         tokenization->settings.describe() + "), " + rowCount(size_t(tokenization->truncatedRows)) +
         " truncated to " + std::to_string(tokenization->seqLen) + " tokens";
}

TrainingData loadTrainingData(const std::string &path, const DataLimits &limits,
                              const TextFields &fields, const TokenizerSource &tokenizer) {
  if (holdsText(path))
    return loadTextDataset(path, limits, fields, tokenizer);
  return TrainingData{loadJsonlDataset(path, limits), std::nullopt};
}

} // namespace bertc
