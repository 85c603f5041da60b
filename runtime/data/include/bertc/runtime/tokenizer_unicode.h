// The Unicode of the BERT tokenizer, as Hugging Face's tokenizers library has it: the
// character classes of its BertNormalizer and BertPreTokenizer, its per-character
// lower-casing and its NFD, over tables generated from the library itself
// (tokenizer_unicode_tables.inc; scripts/gen_unicode_tables.py says which Unicode version
// each comes from). Each character carries a byte span of the original text.
#pragma once

#include "bertc/runtime/unicode_text.h"

namespace bertc::unicode {

/// How the BERT normalizer and pre-tokenizer treat a character (see
/// scripts/gen_unicode_tables.py).
enum CharClass : uint8_t { kOther, kDrop, kSpace, kPunct, kMark };

/// The BERT normalizer's class of a character; kOther for every code point the tables omit.
CharClass charClass(char32_t codePoint);

/// HF's _is_chinese_char: the CJK Unified Ideographs blocks and their extensions, and the
/// CJK Compatibility Ideographs (not Hangul, Hiragana or Katakana).
bool isChineseChar(char32_t codePoint);

/// Appends the full lower-case mapping of `c` alone (one or two code points, each with c's
/// span): Rust's char::to_lowercase, the tokenizers library's Lowercase. No context: Σ
/// gives σ.
void appendLower(const Char &c, std::vector<Char> &out);

/// The canonical combining class of a character (0 for a starter), as the tokenizers
/// library's NFD has it.
uint8_t combiningClass(char32_t codePoint);

/// NFD: full canonical decomposition, then each run of non-starters stably sorted by
/// combining class (the canonical ordering algorithm). Spans go by position as the
/// tokenizers library's alignments do: the parts of a character keep its span unless sorting
/// moves a mark, which then takes the span of the place it moves to.
std::vector<Char> decomposeCanonical(const std::vector<Char> &chars);

/// NFC: NFD, then each character composed with the last starter before it where nothing
/// between them blocks it (Unicode's canonical composition algorithm, Hangul arithmetically).
/// A composed character keeps its starter's span, as the tokenizers library's alignments
/// do (the marks composed into it leave no trace in the offsets).
std::vector<Char> composeCanonical(const std::vector<Char> &chars);

} // namespace bertc::unicode
