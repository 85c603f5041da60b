// UTF-8, and over the tables generated from Python: the BERT normalizer's character
// classes, lower-casing (per character, and Python's whole-text str.lower() with its final
// sigma), the text properties of SQuAD's normalize_answer, and NFD with Hangul decomposed
// arithmetically. Spans ride along: a character's parts keep its span.
#include "bertc/runtime/unicode_text.h"

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
/// Every stride-th code point of [first, last] lower-cases to itself + delta.
struct LowerRun {
  char32_t first, last;
  uint32_t stride;
  int32_t delta;
};
struct LowerPair {
  char32_t codePoint;
  char32_t lower[2];
};
/// One level of a canonical decomposition; second is 0 for a singleton.
struct Decomposition {
  char32_t codePoint, first, second;
};
struct TextPropertyRange {
  char32_t first, last;
  uint8_t properties; ///< TextProperty bits
};

#include "unicode_tables.inc"

/// The table entry whose range holds `codePoint`, or nullptr. Entries are sorted by first.
template <class Entry, size_t N>
const Entry *findRange(const Entry (&table)[N], char32_t codePoint) {
  auto after = std::upper_bound(std::begin(table), std::end(table), codePoint,
                                [](char32_t cp, const Entry &e) { return cp < e.first; });
  if (after == std::begin(table) || (after - 1)->last < codePoint)
    return nullptr;
  return after - 1;
}

/// The entry of a table sorted by codePoint that is for `codePoint`, or nullptr.
template <class Entry, size_t N>
const Entry *findEntry(const Entry (&table)[N], char32_t codePoint) {
  auto entry = std::lower_bound(std::begin(table), std::end(table), codePoint,
                                [](const Entry &e, char32_t cp) { return e.codePoint < cp; });
  return entry != std::end(table) && entry->codePoint == codePoint ? entry : nullptr;
}

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

/// The lower case of `codePoint` alone, when it is one code point (all but İ).
char32_t lowerOne(char32_t codePoint) {
  const LowerRun *run = findRange(kLowerRuns, codePoint);
  bool mapped = run && (codePoint - run->first) % run->stride == 0;
  return mapped ? char32_t(int64_t(codePoint) + run->delta) : codePoint;
}

/// Whether the capital sigma at text[at] is in the Final_Sigma context: a cased character
/// before it and none after it, case-ignorable characters skipped (CPython's
/// handle_capital_sigma).
bool isFinalSigma(std::u32string_view text, size_t at) {
  auto ignorable = [](char32_t c) { return (textProperties(c) & kCaseIgnorable) != 0; };
  auto cased = [](char32_t c) { return (textProperties(c) & kCased) != 0; };
  size_t before = at;
  while (before > 0 && ignorable(text[before - 1]))
    --before;
  if (before == 0 || !cased(text[before - 1]))
    return false;
  size_t after = at + 1;
  while (after < text.size() && ignorable(text[after]))
    ++after;
  return after == text.size() || !cased(text[after]);
}

} // namespace

size_t decodeUtf8At(std::string_view text, size_t at, char32_t &codePoint) {
  auto byte = [&](size_t i) { return uint8_t(text[i]); };
  uint8_t lead = byte(at);
  size_t length = lead < 0x80                    ? 1
                  : lead >= 0xC2 && lead <= 0xDF ? 2
                  : lead >= 0xE0 && lead <= 0xEF ? 3
                  : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                 : 0;
  if (length == 0 || at + length > text.size())
    return 0;
  char32_t value = length == 1 ? lead : lead & (0x7F >> length); // the lead's payload
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80)
      return 0;
    value = value << 6 | (byte(at + i) & 0x3F);
  }
  bool overlong = (length == 3 && value < 0x800) || (length == 4 && value < 0x10000);
  if (overlong || (value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF)
    return 0;
  codePoint = value;
  return length;
}

size_t decodeUtf8(std::string_view text, size_t base, std::vector<Char> &out) {
  for (size_t at = 0; at < text.size();) {
    char32_t codePoint;
    size_t length = decodeUtf8At(text, at, codePoint);
    if (length == 0)
      return at;
    out.push_back({codePoint, base + at, base + at + length});
    at += length;
  }
  return SIZE_MAX;
}

void appendUtf8(char32_t codePoint, std::string &out) {
  static const uint8_t kLeadBits[] = {0x00, 0xC0, 0xE0, 0xF0};
  int continuations = codePoint < 0x80 ? 0 : codePoint < 0x800 ? 1 : codePoint < 0x10000 ? 2 : 3;
  out += char(kLeadBits[continuations] | codePoint >> 6 * continuations);
  for (int i = continuations - 1; i >= 0; --i)
    out += char(0x80 | (codePoint >> 6 * i & 0x3F));
}

CharClass charClass(char32_t codePoint) {
  const CharClassRange *range = findRange(kCharClassRanges, codePoint);
  return range ? range->charClass : kOther;
}

uint8_t textProperties(char32_t codePoint) {
  const TextPropertyRange *range = findRange(kTextPropertyRanges, codePoint);
  return range ? range->properties : 0;
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
  out.push_back({lowerOne(c.codePoint), c.begin, c.end});
}

std::u32string lowerText(std::u32string_view text) {
  constexpr char32_t kCapitalSigma = 0x3A3, kFinalSigma = 0x3C2;
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char32_t c = text[i];
    if (c == kCapitalSigma && isFinalSigma(text, i))
      out += kFinalSigma;
    else if (const LowerPair *pair = findEntry(kLowerPairs, c))
      out.append({pair->lower[0], pair->lower[1]});
    else
      out += lowerOne(c);
  }
  return out;
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
