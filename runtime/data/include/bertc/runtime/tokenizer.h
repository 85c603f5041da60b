// The WordPiece tokenizer of BERT, as Hugging Face's fast (Rust) BertTokenizerFast runs it:
// special tokens split out, then the BertNormalizer (clean, CJK spacing, accent stripping,
// lower-casing), the BertPreTokenizer (whitespace and punctuation splitting), then greedy
// longest-match WordPiece. Every token keeps the byte range of the original UTF-8 text it
// came from, so that spans predicted over tokens map back to text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace bertc {

/// A vocabulary that cannot be used, or text that is not UTF-8; what() names the vocabulary
/// file ("vocab.txt: message" or "vocab.txt:LINE: message") or the byte offset in the text.
class TokenizerError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A WordPiece vocabulary: token strings and their ids (the line index in vocab.txt).
class Vocab {
public:
  /// Reads vocab.txt: one token per line ("\n" or "\r\n" line ends), id = 0-based line.
  /// Throws TokenizerError naming the file when it cannot be read or holds no token, naming
  /// file:line for a token listed twice, and naming the file when [UNK], [CLS], [SEP] or
  /// [PAD] is missing.
  static Vocab load(const std::string &path);

  /// The id of `token`, if the vocabulary has it.
  std::optional<int32_t> find(const std::string &token) const;
  /// The token whose id is `id` (0 <= id < size()).
  const std::string &token(int32_t id) const { return tokens_[size_t(id)]; }
  size_t size() const { return tokens_.size(); }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
};

/// Whether a vocabulary belongs to an uncased model: true when no token other than the
/// bracketed ones ([CLS], [unused0], ...) holds an upper-case letter (a character that
/// lower-casing changes). The last resort for do_lower_case (tokenizer_config.h).
bool guessLowerCase(const Vocab &vocab);

/// How text is normalized before WordPiece: BertTokenizerFast's settings of the same names
/// (tokenizer_config.json's keys).
struct TokenizerSettings {
  bool lowerCase = true;            ///< do_lower_case: Unicode full lower-casing
  std::optional<bool> stripAccents; ///< strip_accents: NFD, then drop Mn; unset: as lowerCase
  bool chineseChars = true;         ///< tokenize_chinese_chars: each CJK ideograph a word

  bool stripsAccents() const { return stripAccents.value_or(lowerCase); }
  /// "uncased", "cased", "cased, accents stripped", "uncased, accents kept", each with
  /// ", CJK not split" when chineseChars is off: what a data summary line says.
  std::string describe() const;
};

/// One token and where it came from: bytes [begin, end) of the text given to tokenize().
/// The pieces of one word split its span; pieces that come from inside one character (a
/// Hangul syllable decomposed to jamo) all carry that character's span. Special tokens
/// added by encode() carry the empty span [0, 0).
struct Token {
  std::string text; ///< the vocabulary string ("un", "##aff", "[UNK]")
  int32_t id;
  size_t begin;
  size_t end;
};

/// Model inputs for one text or a pair, unpadded. tokens[i] describes inputIds[i];
/// tokenTypeIds[i] (0: [CLS], the first text and its [SEP]; 1: the second text and its
/// [SEP]) also tells which text a token's offsets refer to.
struct Encoding {
  std::vector<int32_t> inputIds;
  std::vector<int32_t> tokenTypeIds;
  std::vector<Token> tokens;
  bool truncated = false; ///< tokens were cut to fit maxLen
};

/// BertTokenizerFast over a vocabulary.
///
/// Text must be UTF-8; invalid UTF-8 (including encoded surrogates and overlong forms)
/// throws TokenizerError naming the byte offset, as Python would refuse to decode it.
/// Unicode properties come from Python's unicodedata through unicode_tables.inc.
class Tokenizer {
public:
  Tokenizer(Vocab vocab, TokenizerSettings settings);

  /// Word pieces of `text`, no [CLS]/[SEP] added. Each of [CLS] [SEP] [PAD] [UNK] [MASK]
  /// (those in the vocabulary) written in the text is one token wherever it appears.
  std::vector<Token> tokenize(std::string_view text) const;

  /// [CLS] text [SEP], the text's tokens cut to maxLen - 2. Throws std::invalid_argument
  /// when maxLen < 2.
  Encoding encode(std::string_view text, size_t maxLen) const;

  /// [CLS] a [SEP] b [SEP], cut to maxLen tokens as the tokenizers library's LongestFirst
  /// (pairLengths). Throws std::invalid_argument when maxLen < 3.
  Encoding encodePair(std::string_view a, std::string_view b, size_t maxLen) const;

  const Vocab &vocab() const { return vocab_; }
  const TokenizerSettings &settings() const { return settings_; }
  int32_t clsId() const { return clsId_; }
  int32_t sepId() const { return sepId_; }
  int32_t padId() const { return padId_; }
  int32_t unkId() const { return unkId_; }

private:
  /// Appends the word pieces of `text`, which holds no special token; `base` is its byte
  /// offset in the text given to tokenize().
  void tokenizeSegment(std::string_view text, size_t base, std::vector<Token> &out) const;

  Vocab vocab_;
  TokenizerSettings settings_;
  int32_t clsId_, sepId_, padId_, unkId_;
  std::vector<std::pair<std::string, int32_t>> specials_; ///< split out of text as is
};

/// How many tokens of a pair of texts `first` and `second` tokens long LongestFirst keeps
/// when `room` tokens are left beside the special ones: both whole when they fit, else the
/// shorter whole when it takes at most half and the longer the rest, else half each with the
/// odd one to the longer text (to the second on a tie).
std::pair<size_t, size_t> pairLengths(size_t first, size_t second, size_t room);

} // namespace bertc
