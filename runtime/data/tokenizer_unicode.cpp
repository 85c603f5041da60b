// The tokenizer's Unicode over the tables generated from the tokenizers library: character
// classes, per-character lower-casing, and NFD with Hangul decomposed arithmetically. Spans
// ride along as the library's alignments do.
#include "bertc/runtime/tokenizer_unicode.h"

#include "unicode_lookup.h"

#include <algorithm>

namespace bertc::unicode {
namespace {

struct CharClassRange {
  char32_t first, last;
  CharClass charClass;
};
struct CombiningClassRange {
  char32_t first, last;
  uint8_t combiningClass;
};
/// One level of a canonical decomposition; second is 0 for a singleton.
struct Decomposition {
  char32_t codePoint, first, second;
};

#include "tokenizer_unicode_tables.inc"

// Hangul syllables decompose arithmetically (Unicode 3.12).
constexpr char32_t kHangulBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161,
                   kTrailBase = 0x11A7;
constexpr char32_t kVowelCount = 21, kTrailCount = 28, kSyllableCount = 11172;

/// A part of a character's canonical decomposition; `first` for the first part of each.
struct Part {
  char32_t codePoint;
  bool first;
};

/// Appends the full canonical decomposition of `codePoint`, none of its parts first.
void appendDecomposed(char32_t codePoint, std::vector<Part> &out) {
  if (codePoint >= kHangulBase && codePoint < kHangulBase + kSyllableCount) {
    char32_t index = codePoint - kHangulBase;
    out.push_back({kLeadBase + index / (kVowelCount * kTrailCount), false});
    out.push_back({kVowelBase + index % (kVowelCount * kTrailCount) / kTrailCount, false});
    if (index % kTrailCount != 0)
      out.push_back({kTrailBase + index % kTrailCount, false});
    return;
  }
  const Decomposition *decomposition = findEntry(kDecompositions, codePoint);
  if (!decomposition) {
    out.push_back({codePoint, false});
    return;
  }
  appendDecomposed(decomposition->first, out);
  if (decomposition->second != 0)
    appendDecomposed(decomposition->second, out);
}

} // namespace

uint8_t combiningClass(char32_t codePoint) {
  const CombiningClassRange *range = findRange(kCombiningClassRanges, codePoint);
  return range ? range->combiningClass : 0;
}

CharClass charClass(char32_t codePoint) {
  const CharClassRange *range = findRange(kCharClassRanges, codePoint);
  return range ? range->charClass : kOther;
}

// The tokenizers library's ranges: its sixth starts at 0x2B920 where the Python
// BasicTokenizer's starts at 0x2B820, so U+2B820..U+2B91F stay inside their word.
bool isChineseChar(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

void appendLower(const Char &c, std::vector<Char> &out) {
  if (const LowerPair *pair = findEntry(kLowerPairs, c.codePoint)) {
    out.push_back({pair->lower[0], c.begin, c.end});
    out.push_back({pair->lower[1], c.begin, c.end});
    return;
  }
  out.push_back({lowerOne(kLowerRuns, c.codePoint), c.begin, c.end});
}

/// As the tokenizers library's NormalizedString::nfd does it:
///  1. decompose each character fully, flagging its first part;
///  2. sort each run of non-starters stably by combining class, flags and all;
///  3. give spans by position, not by origin: the k-th first part takes the k-th
///     character's span, and any other part the span of the first part before it. A mark
///     that sorting moves thus takes the span of its new place. The output starts with a
///     first part: each decomposition is in canonical order (scripts/gen_unicode_tables.py
///     checks it), so no other part of a character sorts before its first.
std::vector<Char> decomposeCanonical(const std::vector<Char> &chars) {
  std::vector<Part> parts;
  parts.reserve(chars.size());
  for (const Char &c : chars) {
    size_t first = parts.size();
    appendDecomposed(c.codePoint, parts);
    parts[first].first = true;
  }
  auto isStarter = [](const Part &p) { return combiningClass(p.codePoint) == 0; };
  for (auto run = parts.begin(); run != parts.end();) {
    run = std::find_if_not(run, parts.end(), isStarter);
    auto runEnd = std::find_if(run, parts.end(), isStarter);
    std::stable_sort(run, runEnd, [](const Part &a, const Part &b) {
      return combiningClass(a.codePoint) < combiningClass(b.codePoint);
    });
    run = runEnd;
  }
  std::vector<Char> out;
  out.reserve(parts.size());
  size_t taken = 0; // characters whose span a first part has taken
  for (const Part &part : parts) {
    taken += part.first;
    const Char &span = chars[taken - 1];
    out.push_back({part.codePoint, span.begin, span.end});
  }
  return out;
}

} // namespace bertc::unicode
