// Reads a Hugging Face tokenizer.json of a decoder model into an HfTokenizer: the BPE model
// (byte-level as GPT-2, Llama-3 and Qwen have it, or SentencePiece-style with byte fallback
// as Llama-2 and Mistral have it), its added tokens, normalizer, pre-tokenizer,
// post-processor and decoder. What bertc does not support is an error naming the field.
#pragma once

#include "bertc/runtime/hf_tokenizer.h"

#include <string>
#include <string_view>

namespace bertc {

/// Reads the tokenizer.json at `path` (at most 64 MiB, nesting at most 64 levels). Throws
/// TokenizerError "PATH: FIELD: message" for a field bertc does not support or that is
/// malformed ("PATH: model.type: \"Unigram\" is not supported (BPE is)"), and the JSON
/// readers' errors for a file that cannot be read or parsed.
HfTokenizer loadHfTokenizer(const std::string &path);

/// The tokenizer of the tokenizer.json text `json`; `path` names it in errors.
HfTokenizer parseHfTokenizer(std::string_view json, const std::string &path);

/// Whether the tokenizer file at `path` is a tokenizer.json (its name ends in ".json"),
/// rather than a WordPiece vocab.txt.
inline bool isTokenizerJson(std::string_view path) {
  return path.size() >= 5 && path.substr(path.size() - 5) == ".json";
}

} // namespace bertc
