// The split patterns of byte-level BPE tokenizers, one matcher per pattern. Each matcher
// tries the pattern's alternatives in order at a position and returns the end of the first
// that matches, with the backtracking Oniguruma would do written out where a quantifier
// needs it (\s*[\r\n]+ and \s+(?!\S)).
#include "bertc/runtime/pretokenize_regex.h"

#include "unicode_lookup.h"

#include <array>

namespace bertc {
namespace unicode {
namespace {

struct CodePointRange {
  char32_t first, last;
};

#include "split_unicode_tables.inc"

} // namespace

bool isLetter(char32_t codePoint) { return findRange(kLetterRanges, codePoint) != nullptr; }
bool isNumber(char32_t codePoint) { return findRange(kNumberRanges, codePoint) != nullptr; }

bool isRegexSpace(char32_t c) {
  return (c >= 0x9 && c <= 0xD) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

} // namespace unicode

namespace {

using unicode::isLetter;
using unicode::isNumber;
using unicode::isRegexSpace;

constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

constexpr size_t kNoMatch = 0;

bool isOther(char32_t c) { return !isRegexSpace(c) && !isLetter(c) && !isNumber(c); }
bool isNewline(char32_t c) { return c == '\r' || c == '\n'; }

/// Oniguruma's simple case folding of the contractions' letters: "ſ" (U+017F) folds to "s"
/// and "K" (U+212A) to "k"; no other character folds to one of s t r e v m l d.
char32_t foldContractionLetter(char32_t c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A' + 'a';
  return c == 0x17F ? U's' : c;
}

/// The end of 's 't 're 've 'm 'll 'd at `at` (ignoring case if `ignoreCase`), or kNoMatch.
size_t matchContraction(std::u32string_view text, size_t at, bool ignoreCase) {
  if (text[at] != '\'')
    return kNoMatch;
  static constexpr std::array<std::u32string_view, 7> kSuffixes = {U"s", U"t",  U"re", U"ve",
                                                                   U"m", U"ll", U"d"};
  for (std::u32string_view suffix : kSuffixes) {
    if (at + 1 + suffix.size() > text.size())
      continue;
    bool same = true;
    for (size_t i = 0; i < suffix.size() && same; ++i) {
      char32_t c = text[at + 1 + i];
      same = (ignoreCase ? foldContractionLetter(c) : c) == suffix[i];
    }
    if (same)
      return at + 1 + suffix.size();
  }
  return kNoMatch;
}

/// The end of the run of characters from `at` for which `inside` holds.
template <class Predicate> size_t runEnd(std::u32string_view text, size_t at, Predicate inside) {
  while (at < text.size() && inside(text[at]))
    ++at;
  return at;
}

/// \s+(?!\S) then \s+ at a white-space character: the run, less its last character when a
/// non-space follows and the run is longer than one; the whole run otherwise.
size_t matchSpaces(std::u32string_view text, size_t at) {
  size_t end = runEnd(text, at, isRegexSpace);
  return end < text.size() && end - at >= 2 ? end - 1 : end;
}

size_t matchGpt2(std::u32string_view text, size_t at) {
  if (size_t end = matchContraction(text, at, false))
    return end;
  size_t body = text[at] == ' ' && at + 1 < text.size() ? at + 1 : at;
  for (bool (*inside)(char32_t) : {isLetter, isNumber, isOther}) {
    if (inside(text[body]))
      return runEnd(text, body, inside);
    if (body != at && inside(text[at]))
      return runEnd(text, at, inside);
  }
  return matchSpaces(text, at);
}

size_t matchLlama3(std::u32string_view text, size_t at, size_t maxDigits) {
  if (size_t end = matchContraction(text, at, true))
    return end;
  char32_t c = text[at];
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (isLetter(c))
    return runEnd(text, at, isLetter);
  bool next = at + 1 < text.size();
  if (!isNewline(c) && !isNumber(c) && next && isLetter(text[at + 1]))
    return runEnd(text, at + 1, isLetter);
  // \p{N}{1,maxDigits}
  if (isNumber(c)) {
    size_t end = at;
    while (end < text.size() && end - at < maxDigits && isNumber(text[end]))
      ++end;
    return end;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  size_t body = c == ' ' && next && isOther(text[at + 1]) ? at + 1 : at;
  if (isOther(text[body]))
    return runEnd(text, runEnd(text, body, isOther), isNewline);
  // \s*[\r\n]+: the white space up to and including its last line break.
  size_t spaceEnd = runEnd(text, at, isRegexSpace);
  for (size_t last = spaceEnd; last > at; --last)
    if (isNewline(text[last - 1]))
      return last;
  return matchSpaces(text, at);
}

} // namespace

std::optional<SplitPattern> recognizeSplitPattern(std::string_view regex) {
  for (SplitPattern pattern : {SplitPattern::kGpt2, SplitPattern::kLlama3, SplitPattern::kQwen2})
    if (regex == splitPatternRegex(pattern))
      return pattern;
  return std::nullopt;
}

std::string_view splitPatternRegex(SplitPattern pattern) {
  switch (pattern) {
  case SplitPattern::kGpt2:
    return kGpt2Regex;
  case SplitPattern::kLlama3:
    return kLlama3Regex;
  case SplitPattern::kQwen2:
    return kQwen2Regex;
  }
  return {};
}

std::vector<std::pair<size_t, size_t>> findSplitMatches(SplitPattern pattern,
                                                        std::u32string_view text) {
  std::vector<std::pair<size_t, size_t>> matches;
  for (size_t at = 0; at < text.size();) {
    size_t end = pattern == SplitPattern::kGpt2     ? matchGpt2(text, at)
                 : pattern == SplitPattern::kLlama3 ? matchLlama3(text, at, 3)
                                                    : matchLlama3(text, at, 1);
    matches.emplace_back(at, end);
    at = end;
  }
  return matches;
}

} // namespace bertc
