// A tokenizer.json tokenizer of a decoder model, as Hugging Face's tokenizers library runs
// it: added tokens split out of the text first, then per remaining piece the normalizer
// (none, NFC, or SentencePiece's prepend-and-replace "▁"), the pre-tokenizer (none, or the
// split pattern and the byte-level alphabet), the BPE model; the post-processor's template
// adds BOS/EOS when asked. tokenizer_json.h reads one from a file.
#pragma once

#include "bertc/runtime/bpe_model.h"
#include "bertc/runtime/pretokenize_regex.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bertc {

/// A token of added_tokens, matched in the raw text before anything else runs.
struct AddedToken {
  std::string content;
  int32_t id;
  bool special; ///< skipped by decode(..., skipSpecialTokens = true)
};

/// The tokenizer.json settings bertc supports, each named after its JSON field.
struct HfTokenizerSpec {
  enum class Normalizer {
    kNone,
    kNfc,           ///< {"type": "NFC"}
    kPrependReplace ///< Sequence [Prepend "▁", Replace " " → "▁"] (Llama-2, Mistral)
  };
  enum class Decoder {
    kNone,         ///< tokens joined by spaces, as the library does without a decoder
    kByteLevel,    ///< {"type": "ByteLevel"}
    kSentencePiece ///< Sequence [Replace "▁" → " ", ByteFallback, Fuse, Strip " " 1 0]
  };
  Normalizer normalizer = Normalizer::kNone;
  /// The split pattern before the byte-level alphabet: a Split pre-tokenizer with "Isolated",
  /// or ByteLevel's own use_regex (GPT-2's pattern).
  std::optional<SplitPattern> split;
  bool byteLevel = false;      ///< pre_tokenizer ByteLevel: bytes to the byte-level alphabet
  bool addPrefixSpace = false; ///< ByteLevel add_prefix_space
  Decoder decoder = Decoder::kNone;
  std::vector<AddedToken> addedTokens;
  /// The post_processor's single template: ids of special tokens, and -1 for the text.
  std::vector<int32_t> singleTemplate = {-1};
};

/// A tokenizer.json tokenizer: encode() and decode().
class HfTokenizer {
public:
  HfTokenizer(HfTokenizerSpec spec, BpeModel model);

  /// The tokens of `text` (UTF-8, else TokenizerError naming the byte offset), each with
  /// the byte span of the text it came from; with `addSpecialTokens`, inside the
  /// post-processor's template (its special tokens with the empty span [0, 0)).
  std::vector<Token> encode(std::string_view text, bool addSpecialTokens) const;

  /// The text of `ids` as the file's decoder gives it; ids that are no token are skipped,
  /// as are special added tokens with `skipSpecialTokens`.
  std::string decode(const std::vector<int32_t> &ids, bool skipSpecialTokens) const;

  /// The token whose id is `id` (an added token or the model's), or nullptr.
  const std::string *token(int32_t id) const;
  const HfTokenizerSpec &spec() const { return spec_; }

private:
  /// Appends the tokens of a piece of text that holds no added token; `base` is its byte
  /// offset in the text given to encode().
  void encodeSegment(std::string_view text, size_t base, std::vector<Token> &out) const;

  HfTokenizerSpec spec_;
  BpeModel model_;
};

} // namespace bertc
