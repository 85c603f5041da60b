// The Unicode the runtime's text handling needs: UTF-8 decoding and encoding, and, over the
// tables generated from Python's unicodedata (unicode_tables.inc), BertTokenizer's
// character classes, Python's per-character lower() and NFD/NFC. Every character carries
// the byte span of the original character it came from through each step. Private to the
// runtime (tokenizer.cpp, eval_metrics.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bertc::unicode {

/// How BertTokenizer treats a character (see scripts/gen_unicode_tables.py).
enum CharClass : uint8_t { kOther, kDrop, kSpace, kPunct, kMark };

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

/// BertTokenizer's class of a character; kOther for every code point the tables omit.
CharClass charClass(char32_t codePoint);

/// HF's _is_chinese_char: the CJK Unified Ideographs blocks and their extensions, and the
/// CJK Compatibility Ideographs (not Hangul, Hiragana or Katakana).
bool isChineseChar(char32_t codePoint);

/// Appends the lower case of `c` as Python's str.lower() gives it for that one character
/// (one or two code points, each with c's span).
void appendLower(const Char &c, std::vector<Char> &out);

/// NFD: full canonical decomposition (each part keeps its character's span), then each run
/// of non-starters stably sorted by combining class (the canonical ordering algorithm).
std::vector<Char> decomposeCanonical(const std::vector<Char> &chars);

/// NFC: NFD, then canonical composition; a composite's span covers both of its parts.
std::vector<Char> composeCanonical(const std::vector<Char> &chars);

} // namespace bertc::unicode
