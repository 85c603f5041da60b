// Reading a causal LM's rows (causal_lm_data.h): token ids, text, prompt/completion pairs or
// conversations, then next-token labels.
#include "bertc/runtime/causal_lm_data.h"

#include "bertc/runtime/input_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace bertc {
namespace {

/// The integers of `values` (a JSON array), each in [low, high) or `allowed`; `key` and
/// `where` name them in errors.
std::vector<int32_t> readIds(const nlohmann::json &values, const std::string &key,
                             const std::string &where, int64_t high,
                             std::optional<int32_t> allowed = std::nullopt) {
  if (!values.is_array())
    throw DataError(where + ": '" + key + "' must be an array of integers, got " +
                    values.type_name());
  std::vector<int32_t> ids;
  ids.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const nlohmann::json &value = values[i];
    bool integer = value.is_number_integer();
    int64_t id = integer ? value.get<int64_t>() : 0;
    if (!integer || ((id < 0 || id >= high) && !(allowed && id == *allowed)))
      throw DataError(where + ": '" + key + "'[" + std::to_string(i) +
                      "] must be an integer in [0, " + std::to_string(high) + ")" +
                      (allowed ? " or " + std::to_string(*allowed) : std::string()) + ", got " +
                      value.dump());
    ids.push_back(int32_t(id));
  }
  return ids;
}

/// A row's ids and labels (its own, or the ids).
struct TokenRow {
  std::vector<int32_t> ids, labels;
  bool conversation = false; ///< a `messages` row
};

/// The string `field` of `row`.
std::string stringField(const nlohmann::json &row, const std::string &field,
                        const std::string &where) {
  const nlohmann::json &value = row[field];
  if (!value.is_string())
    throw DataError(where + ": '" + field + "' must be a string, got " + value.type_name());
  return value.get<std::string>();
}

/// The ids of `text` with the tokenizer's special tokens, each checked against the vocabulary.
std::vector<int32_t> encode(const std::string &text, const CausalLmText &source,
                            const DataLimits &limits, const std::string &where) {
  if (!source.tokenizer)
    throw DataError(where + ": text rows need the model's tokenizer.json: pass the trainer "
                            "--vocab FILE (a tokenizer.json), or compile the model with [model] "
                            "from = a Hugging Face folder holding tokenizer.json");
  std::vector<int32_t> ids;
  for (const Token &token : source.tokenizer->encode(text, /*addSpecialTokens=*/true)) {
    if (token.id < 0 || token.id >= limits.vocab)
      throw DataError(where + ": the tokenizer gives id " + std::to_string(token.id) +
                      ", outside the model's vocabulary of " + std::to_string(limits.vocab));
    ids.push_back(token.id);
  }
  return ids;
}

/// A prompt/completion row as TRL's SFTTrainer builds it: prompt + completion tokenized
/// together, the end-of-sequence token appended, the loss on what follows the prompt's
/// own tokens only.
TokenRow promptCompletion(const nlohmann::json &row, const CausalLmText &source,
                          const DataLimits &limits, const std::string &where) {
  std::string prompt = stringField(row, "prompt", where);
  std::string completion = stringField(row, "completion", where);
  size_t promptTokens = encode(prompt, source, limits, where).size();
  TokenRow tokens;
  tokens.ids = encode(prompt + completion, source, limits, where);
  if (source.eosId >= 0 && source.eosId < limits.vocab)
    tokens.ids.push_back(int32_t(source.eosId));
  tokens.labels = tokens.ids;
  std::fill_n(tokens.labels.begin(), std::min(promptTokens, tokens.labels.size()), kIgnoredLabel);
  return tokens;
}

/// The messages of a conversation row: objects with string role and content.
std::vector<ChatMessage> readMessages(const nlohmann::json &values, const std::string &where) {
  if (!values.is_array() || values.empty())
    throw DataError(where + ": 'messages' must be a non-empty array of messages, got " +
                    (values.is_array() ? std::string("[]") : values.type_name()));
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < values.size(); ++i) {
    const nlohmann::json &value = values[i];
    std::string at = "'messages'[" + std::to_string(i) + "]";
    if (!value.is_object())
      throw DataError(where + ": " + at + " must be an object with 'role' and 'content', got " +
                      value.type_name());
    ChatMessage message;
    for (auto [key, field] : {std::pair<const char *, std::string *>{"role", &message.role},
                              {"content", &message.content}}) {
      if (!value.contains(key))
        throw DataError(where + ": " + at + " has no '" + key + "'");
      if (!value[key].is_string())
        throw DataError(where + ": " + at + "." + key + " must be a string, got " +
                        value[key].type_name());
      *field = value[key].get<std::string>();
    }
    messages.push_back(std::move(message));
  }
  if (std::none_of(messages.begin(), messages.end(),
                   [](const ChatMessage &message) { return message.role == "assistant"; }))
    throw DataError(where + ": 'messages' has no \"assistant\" message, so nothing to learn: "
                            "the loss is on the assistant's tokens only");
  return messages;
}

/// A conversation as TRL's SFTTrainer with assistant_only_loss builds it: rendered with the
/// chat template, encoded whole, labelled on the assistant's tokens only.
TokenRow conversation(const nlohmann::json &row, const CausalLmText &source,
                      const DataLimits &limits, const std::string &where) {
  std::vector<ChatMessage> messages = readMessages(row["messages"], where);
  if (!source.chat.chatTemplate || !source.tokenizer)
    throw DataError(where + ": " + source.chat.basis);
  ChatTokens chat;
  try {
    chat = tokenizeChat(renderChat(*source.chat.chatTemplate, messages), *source.tokenizer);
  } catch (const ChatTemplateError &error) {
    throw DataError(where + ": " + error.what());
  } catch (const TokenizerError &error) {
    throw DataError(where + ": 'messages': " + error.what());
  }
  TokenRow tokens;
  tokens.conversation = true;
  for (size_t t = 0; t < chat.ids.size(); ++t) {
    int32_t id = chat.ids[t];
    if (id < 0 || id >= limits.vocab)
      throw DataError(where + ": the tokenizer gives id " + std::to_string(id) +
                      ", outside the model's vocabulary of " + std::to_string(limits.vocab));
    tokens.ids.push_back(id);
    tokens.labels.push_back(chat.assistant[t] ? id : kIgnoredLabel);
  }
  return tokens;
}

TokenRow readRow(std::string_view line, const std::string &where, const DataLimits &limits,
                 const CausalLmText &source) {
  nlohmann::json row = parseJsonLine<DataError>(line, where);
  if (!row.is_object())
    throw DataError(where + ": a row must be a JSON object, got " + std::string(row.type_name()));
  TokenRow tokens;
  if (row.contains("input_ids")) {
    tokens.ids = readIds(row["input_ids"], "input_ids", where, limits.vocab);
    tokens.labels = tokens.ids;
    if (row.contains("labels")) {
      tokens.labels = readIds(row["labels"], "labels", where, limits.vocab, kIgnoredLabel);
      if (tokens.labels.size() != tokens.ids.size())
        throw DataError(where + ": 'labels' has " + std::to_string(tokens.labels.size()) +
                        " entries but 'input_ids' has " + std::to_string(tokens.ids.size()));
    }
    return tokens;
  }
  if (row.contains("messages"))
    return conversation(row, source, limits, where);
  if (row.contains("prompt") || row.contains("completion")) {
    if (!row.contains("prompt") || !row.contains("completion"))
      throw DataError(where + ": a prompt/completion row needs both 'prompt' and 'completion'");
    return promptCompletion(row, source, limits, where);
  }
  if (!row.contains(source.textField))
    throw DataError(where + ": a row needs 'input_ids', 'messages', '" + source.textField +
                    "', or 'prompt' and 'completion'");
  tokens.ids = encode(stringField(row, source.textField, where), source, limits, where);
  tokens.labels = tokens.ids;
  return tokens;
}

} // namespace

CausalLmData loadCausalLmData(const std::string &path, const DataLimits &limits,
                              const CausalLmText &source) {
  std::string text = readWholeFile<DataError>(path, kDataFileLimit);
  CausalLmData result;
  result.data = Dataset{path, {}, LabelKind::TokenClass};
  forEachLine(text, [&](int64_t lineNumber, std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      return;
    TokenRow row = readRow(line, path + ":" + std::to_string(lineNumber), limits, source);
    result.conversations += row.conversation;
    if (int64_t(row.ids.size()) > limits.seqLen) {
      row.ids.resize(size_t(limits.seqLen));
      row.labels.resize(size_t(limits.seqLen));
      ++result.truncatedRows;
    }
    if (row.ids.empty())
      throw DataError(path + ":" + std::to_string(lineNumber) + ": a row needs at least one token");
    Example example{row.ids, std::vector<int32_t>(row.ids.size(), 0), 0};
    example.tokenLabels.assign(row.ids.size(), kIgnoredLabel);
    for (size_t t = 0; t + 1 < row.labels.size(); ++t)
      example.tokenLabels[t] = row.labels[t + 1];
    for (int32_t label : example.tokenLabels)
      result.targetTokens += label != kIgnoredLabel;
    result.data.rows.push_back(std::move(example));
  });
  if (result.data.rows.empty())
    throw DataError(path + ": no rows");
  return result;
}

Dataset packRows(const Dataset &data, int64_t seqLen) {
  Dataset packed{data.path, {}, data.labels, data.paddedLength, data.padId};
  for (const Example &row : data.rows) {
    if (packed.rows.empty() ||
        int64_t(packed.rows.back().inputIds.size() + row.inputIds.size()) > seqLen)
      packed.rows.emplace_back();
    Example &into = packed.rows.back();
    int32_t document = into.documentIds.empty() ? 1 : into.documentIds.back() + 1;
    into.inputIds.insert(into.inputIds.end(), row.inputIds.begin(), row.inputIds.end());
    into.tokenTypeIds.insert(into.tokenTypeIds.end(), row.tokenTypeIds.begin(),
                             row.tokenTypeIds.end());
    into.tokenLabels.insert(into.tokenLabels.end(), row.tokenLabels.begin(), row.tokenLabels.end());
    for (size_t t = 0; t < row.inputIds.size(); ++t) {
      into.positionIds.push_back(int32_t(t));
      into.documentIds.push_back(document);
    }
  }
  return packed;
}

} // namespace bertc
