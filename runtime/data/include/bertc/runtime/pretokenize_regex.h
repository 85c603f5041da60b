// The split patterns of byte-level BPE tokenizers (GPT-2's, Llama-3's and Qwen2's), matched
// as the tokenizers library's Oniguruma matches them, by a hand-written matcher per pattern
// over the Unicode general categories (Unicode 14.0, Oniguruma 6.9.8's): the patterns use
// \p{L}, \p{N}, \s, a case-insensitive group of contractions and a negative look-ahead, no
// more, so no general regular expression engine is needed.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace bertc {

/// A split pattern bertc can match.
enum class SplitPattern {
  kGpt2,   ///< 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kLlama3, ///< (?i:'s|...|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|...
  kQwen2,  ///< Llama-3's with \p{N} for \p{N}{1,3}: one digit at a time
};

/// The pattern whose regular expression (as tokenizer.json writes it) is `regex`, if bertc
/// knows it.
std::optional<SplitPattern> recognizeSplitPattern(std::string_view regex);

/// The regular expression of `pattern`, as tokenizer.json writes it.
std::string_view splitPatternRegex(SplitPattern pattern);

/// The successive leftmost matches of `pattern` in `text` (code points), as [begin, end)
/// index ranges. Every character of these patterns starts a match, so the matches tile the
/// text.
std::vector<std::pair<size_t, size_t>> findSplitMatches(SplitPattern pattern,
                                                        std::u32string_view text);

namespace unicode {
/// \p{L}: general category L*.
bool isLetter(char32_t codePoint);
/// \p{N}: general category N*.
bool isNumber(char32_t codePoint);
/// \s in Oniguruma's Unicode mode: the White_Space property.
bool isRegexSpace(char32_t codePoint);
} // namespace unicode

} // namespace bertc
