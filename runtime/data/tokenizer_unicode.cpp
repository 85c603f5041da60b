// The tokenizer's Unicode over the tables generated from the tokenizers library: character
// classes, per-character lower-casing, and NFD with Hangul decomposed arithmetically. Spans
// ride along: a character's parts keep its span.
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

uint8_t combiningClass(char32_t codePoint) {
  const CombiningClassRange *range = findRange(kCombiningClassRanges, codePoint);
  return range ? range->combiningClass : 0;
}

// Hangul syllables decompose arithmetically (Unicode 3.12).
constexpr char32_t kHangulBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161,
                   kTrailBase = 0x11A7;
constexpr char32_t kVowelCount = 21, kTrailCount = 28, kSyllableCount = 11172;

/// Appends the full canonical decomposition of `codePoint`, each part with `span`'s bytes.
void appendDecomposed(char32_t codePoint, const Char &span, std::vector<Char> &out) {
  if (codePoint >= kHangulBase && codePoint < kHangulBase + kSyllableCount) {
    char32_t index = codePoint - kHangulBase;
    out.push_back({kLeadBase + index / (kVowelCount * kTrailCount), span.begin, span.end});
    out.push_back(
        {kVowelBase + index % (kVowelCount * kTrailCount) / kTrailCount, span.begin, span.end});
    if (index % kTrailCount != 0)
      out.push_back({kTrailBase + index % kTrailCount, span.begin, span.end});
    return;
  }
  const Decomposition *decomposition = findEntry(kDecompositions, codePoint);
  if (!decomposition) {
    out.push_back({codePoint, span.begin, span.end});
    return;
  }
  appendDecomposed(decomposition->first, span, out);
  if (decomposition->second != 0)
    appendDecomposed(decomposition->second, span, out);
}

} // namespace

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

std::vector<Char> decomposeCanonical(const std::vector<Char> &chars) {
  std::vector<Char> out;
  out.reserve(chars.size());
  for (const Char &c : chars)
    appendDecomposed(c.codePoint, c, out);
  auto isStarter = [](const Char &c) { return combiningClass(c.codePoint) == 0; };
  for (auto run = out.begin(); run != out.end();) {
    run = std::find_if_not(run, out.end(), isStarter);
    auto runEnd = std::find_if(run, out.end(), isStarter);
    std::stable_sort(run, runEnd, [](const Char &a, const Char &b) {
      return combiningClass(a.codePoint) < combiningClass(b.codePoint);
    });
    run = runEnd;
  }
  return out;
}

} // namespace bertc::unicode
