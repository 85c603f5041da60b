// The tokenizer settings of a run, from three places in order of precedence: the job's
// [data] keys, tokenizer_config.json beside the vocabulary (the file Hugging Face's
// AutoTokenizer reads them from), and, for do_lower_case alone, a guess from the
// vocabulary. A key none of them sets keeps BertTokenizerFast's default.
#pragma once

#include "bertc/runtime/tokenizer.h"

#include <optional>
#include <string>

namespace bertc {

/// Tokenizer settings some source sets; an unset one is left to the next source.
struct TokenizerOverrides {
  std::optional<bool> lowerCase;    ///< do_lower_case
  std::optional<bool> stripAccents; ///< strip_accents (null in JSON leaves it unset)
  std::optional<bool> chineseChars; ///< tokenize_chinese_chars
};

/// Where a run's tokenizer comes from: its vocabulary and the job's [data] settings.
struct TokenizerSource {
  std::string vocabPath; ///< vocab.txt; "" when the run has none
  TokenizerOverrides job;
};

/// The settings tokenizer_config.json at `path` holds: do_lower_case and
/// tokenize_chinese_chars (booleans), strip_accents (a boolean or null); other keys are
/// Hugging Face's business and are ignored. Throws TokenizerError "PATH: ..." when the file
/// cannot be read, is not a JSON object or exceeds bertc's JSON limits, and
/// "PATH: key 'KEY' must be a boolean, got ..." for a value of the wrong type.
TokenizerOverrides readTokenizerConfig(const std::string &path);

/// tokenizer_config.json for `settings`, as a saved model folder holds it, so that
/// Hugging Face's AutoTokenizer tokenizes as the run did (without the file,
/// BertTokenizerFast lower-cases): do_lower_case, strip_accents (null when it follows
/// do_lower_case), tokenize_chinese_chars and tokenizer_class "BertTokenizer".
std::string formatTokenizerConfig(const TokenizerSettings &settings);

/// The settings for `vocab` (loaded from vocab.path()): each of `job` that is set, else
/// tokenizer_config.json's in the vocabulary's folder (when that file exists), else
/// guessLowerCase(vocab) for do_lower_case and the defaults for the others.
TokenizerSettings resolveTokenizerSettings(const Vocab &vocab, const TokenizerOverrides &job);

} // namespace bertc
