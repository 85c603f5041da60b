// The Unicode the runtime's text handling needs: UTF-8 decoding and encoding, and, over the
// tables generated from Python (unicode_tables.inc), the BERT normalizer's character classes,
// per-character lower-casing, NFD, and the properties and whole-text lower-casing of the
// official SQuAD script's normalize_answer. Every character carries the byte span of the
// original character it came from through each step. Used by the tokenizer (tokenizer.cpp)
// and the SQuAD metrics (eval_metrics.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bertc::unicode {

/// How the BERT normalizer and pre-tokenizer treat a character (see
/// scripts/gen_unicode_tables.py).
enum CharClass : uint8_t { kOther, kDrop, kSpace, kPunct, kMark };

/// Properties Python's str methods and regular expressions read, as bits.
enum TextProperty : uint8_t {
  kWordChar = 1,      ///< \w: str.isalnum() or '_'
  kSpaceChar = 2,     ///< str.isspace(): what str.split() splits on
  kCased = 4,         ///< Unicode's Cased (recorded only where not case-ignorable)
  kCaseIgnorable = 8, ///< Unicode's Case_Ignorable
};

/// A character of the text being normalized and the bytes [begin, end) of the original it
/// came from.
struct Char {
  char32_t codePoint;
  size_t begin, end;
};

/// Decodes the UTF-8 sequence that starts at text[at]: returns its length in bytes and sets
/// `codePoint`, or returns 0 and leaves `codePoint` alone when the bytes there are not a
/// well-formed sequence (a stray continuation byte, a sequence cut short, an overlong form,
/// a surrogate, or beyond U+10FFFF).
size_t decodeUtf8At(std::string_view text, size_t at, char32_t &codePoint);

/// Decodes UTF-8 into `out` (spans offset by `base`); returns the offset of the first
/// invalid byte, or SIZE_MAX when all of `text` is valid.
size_t decodeUtf8(std::string_view text, size_t base, std::vector<Char> &out);

/// Appends the UTF-8 encoding of `codePoint`.
void appendUtf8(char32_t codePoint, std::string &out);

/// The BERT normalizer's class of a character; kOther for every code point the tables omit.
CharClass charClass(char32_t codePoint);

/// The TextProperty bits of a character.
uint8_t textProperties(char32_t codePoint);

/// HF's _is_chinese_char: the CJK Unified Ideographs blocks and their extensions, and the
/// CJK Compatibility Ideographs (not Hangul, Hiragana or Katakana).
bool isChineseChar(char32_t codePoint);

/// Appends the full lower-case mapping of `c` alone (one or two code points, each with c's
/// span): Python's str.lower() of that one character, which is also Rust's
/// char::to_lowercase (the tokenizers library's Lowercase). No context: Σ gives σ.
void appendLower(const Char &c, std::vector<Char> &out);

/// Python's str.lower() of a whole text: each character's full mapping, except that a
/// capital sigma in the Final_Sigma context (after a cased character and not before one,
/// case-ignorable characters skipped both ways) becomes the final ς.
std::u32string lowerText(std::u32string_view text);

/// NFD: full canonical decomposition (each part keeps its character's span), then each run
/// of non-starters stably sorted by combining class (the canonical ordering algorithm).
std::vector<Char> decomposeCanonical(const std::vector<Char> &chars);

} // namespace bertc::unicode
