// Lookups over the generated Unicode tables (unicode_tables.inc, from Python, and
// tokenizer_unicode_tables.inc, from the tokenizers library): the lower-casing element types
// both have, and binary searches over tables sorted by code point. Private to bertc_data.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace bertc::unicode {

/// Every stride-th code point of [first, last] lower-cases to itself + delta.
struct LowerRun {
  char32_t first, last;
  uint32_t stride;
  int32_t delta;
};

/// A code point whose lower case is two code points.
struct LowerPair {
  char32_t codePoint;
  char32_t lower[2];
};

/// The table entry whose range [first, last] holds `codePoint`, or nullptr. Entries are
/// sorted by first.
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

/// The lower case of `codePoint` by `runs`, for a code point whose lower case is one code
/// point (itself when no run maps it).
template <size_t N> char32_t lowerOne(const LowerRun (&runs)[N], char32_t codePoint) {
  const LowerRun *run = findRange(runs, codePoint);
  bool mapped = run && (codePoint - run->first) % run->stride == 0;
  return mapped ? char32_t(int64_t(codePoint) + run->delta) : codePoint;
}

} // namespace bertc::unicode
