// Reading a task's data file: the choice by task, SQuAD windows as rows, and the
// token-classification reader (words tokenized one at a time so that each tag lands on its
// word's first piece).
#include "bertc/runtime/task_data.h"

#include "bertc/runtime/causal_lm_data.h"
#include "bertc/runtime/input_files.h"
#include "bertc/runtime/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace bertc {

Tokenizer loadDataTokenizer(const std::string &dataPath, const TokenizerSource &source,
                            const DataLimits &limits) {
  const std::string &vocabPath = source.vocabPath;
  if (vocabPath.empty())
    throw DataError(dataPath + ": text data needs a WordPiece vocabulary: pass the trainer "
                               "--vocab FILE (a vocab.txt), or compile the model with "
                               "[model] from = a Hugging Face folder holding vocab.txt");
  Vocab vocab = Vocab::load(vocabPath);
  if (int64_t(vocab.size()) > limits.vocab)
    throw DataError(vocabPath + ": the vocabulary has " + std::to_string(vocab.size()) +
                    " tokens but the model's embedding has " + std::to_string(limits.vocab) +
                    " ([model] vocab): its ids would fall outside the model");
  TokenizerSettings settings = resolveTokenizerSettings(vocab, source.job);
  Tokenizer tokenizer(std::move(vocab), settings);
  // The batches are padded with the model's pad id, whose embedding row it keeps fixed.
  if (tokenizer.padId() != limits.padId)
    throw DataError(vocabPath + ":" + std::to_string(tokenizer.padId() + 1) +
                    ": [PAD] must be the vocabulary's token " + std::to_string(limits.padId) +
                    " (line " + std::to_string(limits.padId + 1) +
                    "), the model's pad_token_id: bertc pads batches with that id");
  return tokenizer;
}

namespace {

/// "(uncased)", "(cased, accents stripped)", ...
std::string casing(const Tokenizer &tokenizer) {
  return "(" + tokenizer.settings().describe() + ")";
}

TaskData loadSquadRows(const std::string &path, const DataLimits &limits,
                       const DataSettings &settings) {
  Tokenizer tokenizer = loadDataTokenizer(path, settings.tokenizer, limits);
  if (limits.seqLen < 8)
    throw DataError(path + ": SQuAD windows need a seq_len of at least 8 tokens, the plan has " +
                    std::to_string(limits.seqLen));
  TaskData task;
  task.squad = loadSquadDataset(path);
  task.features = buildSquadFeatures(*task.squad, tokenizer, size_t(limits.seqLen), settings.squad);
  task.squadOptions = settings.squad;
  task.tokenizer = tokenizer.settings();
  task.data = Dataset{path, {}, LabelKind::Span, limits.seqLen};
  task.data.rows.reserve(task.features.features.size());
  for (const SquadFeature &feature : task.features.features) {
    Example row{feature.inputIds, feature.tokenTypeIds, feature.startPosition};
    row.endPosition = feature.endPosition;
    task.data.rows.push_back(std::move(row));
  }
  task.summary = "data: " + std::to_string(task.squad->examples.size()) + " questions from " +
                 path + " in " + std::to_string(task.data.rows.size()) + " windows of up to " +
                 std::to_string(limits.seqLen) + " tokens (doc_stride " +
                 std::to_string(settings.squad.docStride) + "), tokenized with " +
                 settings.tokenizer.vocabPath + " " + casing(tokenizer);
  if (!task.squad->mismatchedAnswers.empty())
    task.summary += "; " + std::to_string(task.squad->mismatchedAnswers.size()) +
                    " answers differ from their context (located by answer_start), first: " +
                    task.squad->mismatchedAnswers.front();
  return task;
}

/// Reads one row of tagged words (see loadTaggedWords); `where` is "FILE:LINE".
Example parseTaggedRow(std::string_view line, const std::string &where, const DataLimits &limits,
                       const TextFields &fields, const Tokenizer &tokenizer) {
  auto fail = [&](const std::string &what) { return DataError(where + ": " + what); };
  nlohmann::json row = parseJsonLine<DataError>(line, where);
  if (!row.is_object())
    throw fail("a row must be a JSON object, got " + std::string(row.type_name()));
  for (const std::string &field : {fields.text, fields.label})
    if (!row.contains(field))
      throw fail("missing key '" + field + "'");
  const nlohmann::json &words = row[fields.text], &tags = row[fields.label];
  if (!words.is_array())
    throw fail("'" + fields.text + "' must be an array of words, got " + words.type_name());
  if (!tags.is_array())
    throw fail("'" + fields.label + "' must be an array of integer tags, got " + tags.type_name());
  if (words.size() != tags.size())
    throw fail("'" + fields.text + "' has " + std::to_string(words.size()) + " words but '" +
               fields.label + "' has " + std::to_string(tags.size()) + " tags");

  size_t capacity = size_t(limits.seqLen) - 2; // [CLS] and [SEP]
  Example example{{tokenizer.clsId()}, {}, 0};
  example.tokenLabels = {kIgnoredLabel};
  for (size_t w = 0; w < words.size(); ++w) {
    std::string at = "[" + std::to_string(w) + "]";
    if (!words[w].is_string())
      throw fail("'" + fields.text + "'" + at + " must be a string, got " + words[w].dump());
    if (!tags[w].is_number_integer() || tags[w].get<int64_t>() < 0 ||
        tags[w].get<int64_t>() >= limits.numLabels)
      throw fail("'" + fields.label + "'" + at + " must be an integer tag in [0, " +
                 std::to_string(limits.numLabels) + "), got " + tags[w].dump());
    std::vector<Token> pieces;
    try {
      pieces = tokenizer.tokenize(words[w].get<std::string>());
    } catch (const TokenizerError &error) {
      throw fail("'" + fields.text + "'" + at + ": " + error.what());
    }
    for (size_t p = 0; p < pieces.size(); ++p) {
      if (example.inputIds.size() - 1 == capacity)
        break;
      example.inputIds.push_back(pieces[p].id);
      example.tokenLabels.push_back(p == 0 ? int32_t(tags[w].get<int64_t>()) : kIgnoredLabel);
    }
  }
  example.inputIds.push_back(tokenizer.sepId());
  example.tokenLabels.push_back(kIgnoredLabel);
  example.tokenTypeIds.assign(example.inputIds.size(), 0);
  return example;
}

} // namespace

Dataset loadTaggedWords(const std::string &path, const DataLimits &limits, const TextFields &fields,
                        const Tokenizer &tokenizer) {
  if (limits.seqLen < 3)
    throw DataError(path + ": tagged words need a seq_len of at least 3 tokens");
  std::string text = readWholeFile<DataError>(path, kDataFileLimit);
  Dataset data{path, {}, LabelKind::TokenClass};
  forEachLine(text, [&](int64_t lineNumber, std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      return;
    data.rows.push_back(
        parseTaggedRow(line, path + ":" + std::to_string(lineNumber), limits, fields, tokenizer));
  });
  if (data.rows.empty())
    throw DataError(path + ": no rows");
  return data;
}

namespace {

/// A causal LM's rows, text tokenized with the tokenizer.json the run was given (a
/// vocab.txt is a WordPiece encoder's, which no causal LM reads).
TaskData loadCausalLmRows(const std::string &path, const DataLimits &limits,
                          const DataSettings &settings) {
  const std::string &tokenizerPath = settings.tokenizer.vocabPath;
  std::optional<HfTokenizer> tokenizer;
  if (!tokenizerPath.empty()) {
    if (!isTokenizerJson(tokenizerPath))
      throw DataError(tokenizerPath + ": a causal LM's text is tokenized with the model's "
                                      "tokenizer.json, not a WordPiece vocabulary");
    tokenizer = loadHfTokenizer(tokenizerPath);
  }
  CausalLmText source{settings.fields.text, tokenizer ? &*tokenizer : nullptr, settings.eosId};
  source.chat = chooseChatTemplate(settings.chatTemplate, source.tokenizer, tokenizerPath);
  CausalLmData rows = loadCausalLmData(path, limits, source);
  TaskData result;
  result.summary = "data: " + std::to_string(rows.data.rows.size()) + " rows from " + path +
                   (tokenizer ? ", text tokenized with " + tokenizerPath : std::string()) + ", " +
                   std::to_string(rows.targetTokens) + " target tokens";
  if (rows.conversations)
    result.summary += ", " + std::to_string(rows.conversations) +
                      " conversations rendered with the " +
                      std::string(chatTemplateName(*source.chat.chatTemplate)) +
                      " chat template (by " + source.chat.basis + ")";
  if (rows.truncatedRows)
    result.summary += ", " + std::to_string(rows.truncatedRows) + " rows truncated to " +
                      std::to_string(limits.seqLen) + " tokens";
  if (settings.packing) {
    rows.data = packRows(rows.data, limits.seqLen);
    result.summary += ", packed into " + std::to_string(rows.data.rows.size()) + " rows of up to " +
                      std::to_string(limits.seqLen) + " tokens";
  }
  result.data = std::move(rows.data);
  result.data.paddedLength = settings.paddedLength;
  return result;
}

TaskData loadRows(TaskKind task, const std::string &path, const DataLimits &limits,
                  const DataSettings &settings) {
  if (task == TaskKind::CausalLM)
    return loadCausalLmRows(path, limits, settings);
  if (task == TaskKind::Span)
    return loadSquadRows(path, limits, settings);
  if (task == TaskKind::TokenClassification) {
    Tokenizer tokenizer = loadDataTokenizer(path, settings.tokenizer, limits);
    TaskData result;
    result.data = loadTaggedWords(path, limits, settings.fields, tokenizer);
    result.tokenizer = tokenizer.settings();
    result.summary = "data: " + std::to_string(result.data.rows.size()) +
                     " rows of tagged words from " + path + ", tokenized with " +
                     settings.tokenizer.vocabPath + " " + casing(tokenizer);
    return result;
  }
  TrainingData training = loadTrainingData(path, limits, settings.fields, settings.tokenizer);
  TaskData result;
  result.summary = training.summary();
  if (training.tokenization)
    result.tokenizer = training.tokenization->settings;
  result.data = std::move(training.data);
  result.data.paddedLength = settings.paddedLength;
  return result;
}

} // namespace

TaskData loadTaskData(TaskKind task, const std::string &path, const DataLimits &limits,
                      const DataSettings &settings) {
  TaskData result = loadRows(task, path, limits, settings);
  result.data.padId = int32_t(limits.padId);
  return result;
}

} // namespace bertc
