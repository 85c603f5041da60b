// NFC over the tokenizer's NFD (tokenizer_unicode.cpp) and the primary composites of
// compose_unicode_tables.inc, for the tokenizers' NFC normalizer (Qwen's tokenizer.json).
#include "bertc/runtime/tokenizer_unicode.h"

#include <algorithm>
#include <iterator>

namespace bertc::unicode {
namespace {

/// first + second composes canonically to composite.
struct Composition {
  char32_t first, second, composite;
};

#include "compose_unicode_tables.inc"

// Hangul syllables compose arithmetically (Unicode 3.12).
constexpr char32_t kHangulBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161,
                   kTrailBase = 0x11A7;
constexpr char32_t kLeadCount = 19, kVowelCount = 21, kTrailCount = 28;
constexpr char32_t kSyllableCount = kLeadCount * kVowelCount * kTrailCount;

/// The primary composite of first + second, or 0.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLeadBase && first < kLeadBase + kLeadCount && second >= kVowelBase &&
      second < kVowelBase + kVowelCount)
    return kHangulBase + ((first - kLeadBase) * kVowelCount + (second - kVowelBase)) * kTrailCount;
  if (first >= kHangulBase && first < kHangulBase + kSyllableCount &&
      (first - kHangulBase) % kTrailCount == 0 && second > kTrailBase &&
      second < kTrailBase + kTrailCount)
    return first + (second - kTrailBase);
  auto at = std::lower_bound(std::begin(kCompositions), std::end(kCompositions), first,
                             [](const Composition &c, char32_t cp) { return c.first < cp; });
  for (; at != std::end(kCompositions) && at->first == first; ++at)
    if (at->second == second)
      return at->composite;
  return 0;
}

} // namespace

std::vector<Char> composeCanonical(const std::vector<Char> &chars) {
  std::vector<Char> out;
  out.reserve(chars.size());
  // The last starter's index in `out`, and the class of the last character after it (-1
  // when none is, so that nothing blocks).
  size_t starter = SIZE_MAX;
  int lastClass = -1;
  for (const Char &c : decomposeCanonical(chars)) {
    int cls = combiningClass(c.codePoint);
    if (starter != SIZE_MAX && (lastClass == -1 || lastClass < cls)) {
      if (char32_t composite = compose(out[starter].codePoint, c.codePoint)) {
        out[starter].codePoint = composite;
        continue;
      }
    }
    if (cls == 0) {
      starter = out.size();
      lastClass = -1;
    } else {
      lastClass = cls;
    }
    out.push_back(c);
  }
  return out;
}

} // namespace bertc::unicode
