// The data of each kind of task, read into the rows the batcher feeds: classification and
// regression rows (text_dataset.h), SQuAD features with answer positions (squad_data.h),
// and words with per-word tags for token classification. Evaluation also needs what the
// rows came from: a span prediction is mapped back to its question's context.
#pragma once

#include "bertc/abi/trainer.h"
#include "bertc/runtime/squad_data.h"
#include "bertc/runtime/text_dataset.h"
#include "bertc/runtime/tokenizer_config.h"

#include <optional>
#include <string>

namespace bertc {

/// The job's [data] settings of how a file becomes rows.
struct DataSettings {
  TextFields fields;
  TokenizerSource tokenizer;
  SquadOptions squad;       ///< Span only
  int64_t paddedLength = 0; ///< every row padded to this (Dataset::paddedLength); 0: none
  bool packing = false;     ///< CausalLM: rows packed into seq_len rows (packRows)
  int64_t eosId = -1;       ///< CausalLM: the id a completion ends with; -1: none
  /// CausalLM: the template of `messages` rows ([data] chat_template); "": from the
  /// tokenizer's files (chooseChatTemplate).
  std::string chatTemplate;
};

/// One data file of a task, as rows and as what they came from.
struct TaskData {
  Dataset data;
  std::string summary;               ///< the line the trainer prints about it
  std::optional<SquadDataset> squad; ///< Span: the questions, contexts and gold answers
  SquadFeatures features;            ///< Span: features[i] is data.rows[i]
  SquadOptions squadOptions;         ///< Span: how answers are picked from the logits
  /// The settings text was tokenized with; none for pre-tokenized rows.
  std::optional<TokenizerSettings> tokenizer;
};

/// Reads the file at `path` for `task`:
///  - Classification, Regression: loadTrainingData (classes, or targets when
///    limits.numLabels == 1);
///  - Span: a SQuAD v1.1/v2.0 JSON file, tokenized with settings.tokenizer, one row per
///    window (buildSquadFeatures at limits.seqLen with settings.squad) labelled with the
///    answer's start and end token ([CLS] when the window does not hold it);
///  - TokenClassification: loadTaggedWords;
///  - CausalLM: loadCausalLmData, text tokenized with settings.tokenizer's file, which must
///    be a tokenizer.json, conversations rendered with the template chooseChatTemplate
///    gives for settings.chatTemplate.
/// Throws DataError (or SquadError, TokenizerError) naming the file, and line or JSON path.
TaskData loadTaskData(TaskKind task, const std::string &path, const DataLimits &limits,
                      const DataSettings &settings);

/// Token-classification JSONL: one row per line, {"<fields.text>": ["EU", "rejects", ...],
/// "<fields.label>": [3, 0, ...]}, one integer tag in [0, limits.numLabels) per word. Each
/// word is tokenized alone; its first word piece carries the tag and the other pieces, [CLS]
/// and [SEP] carry kIgnoredLabel (Hugging Face's run_ner with label_all_tokens off). Rows
/// are cut to limits.seqLen tokens. Throws DataError naming FILE:LINE for malformed JSON, a
/// missing field, a word that is not a string, a tag that is not an integer in range, or
/// word and tag lists of different lengths; naming the file when it has no rows.
Dataset loadTaggedWords(const std::string &path, const DataLimits &limits, const TextFields &fields,
                        const Tokenizer &tokenizer);

/// The tokenizer of `source` for the data file `dataPath`, its settings resolved by
/// resolveTokenizerSettings. Throws DataError when there is no vocabulary or it holds more
/// ids than the model's embedding; TokenizerError for an unusable vocabulary or
/// tokenizer_config.json.
Tokenizer loadDataTokenizer(const std::string &dataPath, const TokenizerSource &source,
                            const DataLimits &limits);

} // namespace bertc
