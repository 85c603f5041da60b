// tokenizer_config.json, read for the three settings bertc's tokenizer has and written for
// saved model folders, and the order of precedence between the job, that file and the
// vocabulary.
#include "bertc/runtime/tokenizer_config.h"

#include "bertc/runtime/input_files.h"

#include <filesystem>

namespace bertc {
namespace {

/// `key` of `config` as a boolean, unset when absent (or null, where `nullable`).
std::optional<bool> readFlag(const nlohmann::json &config, const char *key, bool nullable,
                             const std::string &path) {
  if (!config.contains(key))
    return std::nullopt;
  const nlohmann::json &value = config[key];
  if (value.is_boolean())
    return value.get<bool>();
  if (nullable && value.is_null())
    return std::nullopt;
  throw TokenizerError(path + ": key '" + key + "' must be a boolean" +
                       (nullable ? " or null" : "") + ", got " + value.dump());
}

} // namespace

TokenizerOverrides readTokenizerConfig(const std::string &path) {
  nlohmann::json config = parseJsonFile<TokenizerError>(
      readWholeFile<TokenizerError>(path, kTokenizerConfigLimit), path);
  if (!config.is_object())
    throw TokenizerError(path + ": must be a JSON object, got " + config.type_name());
  return {readFlag(config, "do_lower_case", false, path),
          readFlag(config, "strip_accents", true, path),
          readFlag(config, "tokenize_chinese_chars", false, path)};
}

std::string formatTokenizerConfig(const TokenizerSettings &settings) {
  nlohmann::ordered_json config = {
      {"do_lower_case", settings.lowerCase},
      {"strip_accents",
       settings.stripAccents ? nlohmann::ordered_json(*settings.stripAccents) : nullptr},
      {"tokenize_chinese_chars", settings.chineseChars},
      {"tokenizer_class", "BertTokenizer"}};
  return config.dump(2) + "\n";
}

TokenizerSettings resolveTokenizerSettings(const Vocab &vocab, const TokenizerOverrides &job) {
  TokenizerOverrides file;
  std::filesystem::path config =
      std::filesystem::path(vocab.path()).parent_path() / "tokenizer_config.json";
  std::error_code ignored; // a folder that cannot be listed has no config to read
  if (std::filesystem::exists(config, ignored))
    file = readTokenizerConfig(config.string());
  TokenizerSettings settings;
  if (std::optional<bool> lowerCase = job.lowerCase ? job.lowerCase : file.lowerCase)
    settings.lowerCase = *lowerCase;
  else
    settings.lowerCase = guessLowerCase(vocab);
  settings.stripAccents = job.stripAccents ? job.stripAccents : file.stripAccents;
  settings.chineseChars = job.chineseChars.value_or(file.chineseChars.value_or(true));
  return settings;
}

} // namespace bertc
