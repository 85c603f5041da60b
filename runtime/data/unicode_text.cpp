// UTF-8, and over the tables generated from Python: the text properties of SQuAD's
// normalize_answer and Python's whole-text str.lower() with its final sigma.
#include "bertc/runtime/unicode_text.h"

#include "unicode_lookup.h"

namespace bertc::unicode {
namespace {

struct TextPropertyRange {
  char32_t first, last;
  uint8_t properties; ///< TextProperty bits
};

#include "unicode_tables.inc"

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

uint8_t textProperties(char32_t codePoint) {
  const TextPropertyRange *range = findRange(kTextPropertyRanges, codePoint);
  return range ? range->properties : 0;
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
      out += lowerOne(kLowerRuns, c);
  }
  return out;
}

} // namespace bertc::unicode
