// The trainer's one entry point for training data: pre-tokenized JSONL (jsonl_data.h) as
// before, or raw text (GLUE-style CSV/TSV with named columns, JSONL with a text field) read
// as a table (text_table.h) and encoded by the WordPiece tokenizer (tokenizer.h) into the
// same rows, so that the batcher never knows which it was given.
#pragma once

#include "bertc/runtime/jsonl_data.h"
#include "bertc/runtime/tokenizer_config.h"

#include <cstdint>
#include <optional>
#include <string>

namespace bertc {

/// Which columns of a text table hold what: the [data] keys text, text_pair and label.
struct TextFields {
  std::string text = "text";
  std::string textPair; ///< the second text of a sentence pair; empty for single texts
  std::string label = "label";
};

/// How the rows of a text file became tokens.
struct TokenizationSummary {
  std::string vocabPath;
  TokenizerSettings settings;
  int64_t seqLen;        ///< the longest encoding kept (DataLimits::seqLen)
  int64_t truncatedRows; ///< rows whose encoding was longer than seqLen, cut to it
};

/// A training set, and how it was tokenized when it was text.
struct TrainingData {
  Dataset data;
  std::optional<TokenizationSummary> tokenization; ///< absent for pre-tokenized JSONL

  /// One line for the trainer to print: "data: 20 rows from train.jsonl (pre-tokenized)"
  /// or "data: 20 rows from train.tsv, tokenized with vocab.txt (uncased), 2 rows
  /// truncated to 16 tokens" (TokenizerSettings::describe()).
  std::string summary() const;
};

/// Reads the training data at `path`, its kind decided by the file:
///  1. `.csv` and `.tsv` files, and `.jsonl` files whose first row has no "input_ids", are
///     text: each row's `fields.text` (and `fields.textPair` when not empty) is encoded as
///     [CLS] a [SEP] (b [SEP]) truncated to limits.seqLen (a pair "longest first"), with
///     the tokenizer of `tokenizer` (loadDataTokenizer); its
///     `fields.label` must be an integer in [0, limits.numLabels), or any finite number
///     when limits.numLabels == 1 (a regression target);
///  2. every other file is pre-tokenized JSONL, read by loadJsonlDataset.
/// Throws DataError naming FILE:LINE for a row whose text is not UTF-8 or whose label is
/// bad, and naming the file for a missing column, for text without a vocabulary (empty
/// vocabPath), for a vocabulary larger than limits.vocab, or for sentence pairs when
/// limits.typeVocab < 2. Throws TokenizerError (naming the file) for an unusable
/// vocabulary or tokenizer_config.json.
TrainingData loadTrainingData(const std::string &path, const DataLimits &limits,
                              const TextFields &fields, const TokenizerSource &tokenizer);

} // namespace bertc
