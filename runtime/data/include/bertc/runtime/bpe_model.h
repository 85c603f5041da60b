// The BPE model of Hugging Face's tokenizers library: a word's symbols (its characters, or
// the byte-level characters of its bytes) looked up in the vocabulary, then merged pair by
// pair, the pair of lowest merge rank first and the leftmost among equal ranks. Symbols the
// vocabulary lacks become their bytes' <0xNN> tokens (byte fallback) or the unknown token.
#pragma once

#include "bertc/runtime/tokenizer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace bertc {

/// One symbol of a word given to the model: its text and the bytes [begin, end) of the
/// original text it came from.
struct BpeSymbol {
  std::string text;
  size_t begin, end;
};

/// A merge rule: the tokens left and right merge into merged (all vocabulary ids).
struct BpeMerge {
  int32_t left, right, merged;
};

/// What tokenizer.json's "model" says beside the vocabulary and merges.
struct BpeOptions {
  std::optional<int32_t> unkId; ///< unk_token's id; none: a symbol with no token is dropped
  bool byteFallback = false;    ///< byte_fallback: <0xNN> tokens before the unknown token
  bool fuseUnk = false;         ///< fuse_unk: successive unknown symbols are one token
  bool ignoreMerges = false;    ///< ignore_merges: a word in the vocabulary is one token
};

/// A BPE vocabulary and its merges, ranked by their order.
class BpeModel {
public:
  BpeModel(std::unordered_map<std::string, int32_t> vocab, const std::vector<BpeMerge> &merges,
           BpeOptions options);

  /// Appends the tokens of one word (a pre-tokenized piece); each token spans its symbols.
  void tokenize(const std::vector<BpeSymbol> &word, std::vector<Token> &out) const;

  /// The id of `token`, if the vocabulary has it.
  std::optional<int32_t> find(std::string_view token) const;
  /// The token whose id is `id`, or nullptr.
  const std::string *token(int32_t id) const;

private:
  struct Ranked {
    uint32_t rank;
    int32_t merged;
  };
  static uint64_t pairKey(int32_t left, int32_t right) {
    return uint64_t(uint32_t(left)) << 32 | uint32_t(right);
  }

  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<int32_t, std::string> tokens_;
  std::unordered_map<uint64_t, Ranked> merges_;
  BpeOptions options_;
};

} // namespace bertc
