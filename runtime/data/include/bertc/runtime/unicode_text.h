// The Unicode the runtime's text handling needs: UTF-8 decoding and encoding, the character
// with its span that the tokenizer normalizes (tokenizer_unicode.h), and, over tables
// generated from Python (unicode_tables.inc), the properties and whole-text lower-casing of
// the official SQuAD script's normalize_answer (eval_metrics.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bertc::unicode {

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

/// The TextProperty bits of a character (Python's).
uint8_t textProperties(char32_t codePoint);

/// Python's str.lower() of a whole text: each character's full mapping, except that a
/// capital sigma in the Final_Sigma context (after a cased character and not before one,
/// case-ignorable characters skipped both ways) becomes the final ς.
std::u32string lowerText(std::u32string_view text);

} // namespace bertc::unicode
