//===- HtmlText.h - text pieces of the memory page ---------------*- C++ -*-===//
//
// What memory.html's sections share: escaping, and numbers and byte sizes written for
// people (exact counts in tooltips, about three digits in binary units on the page).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bertc::html {

/// Appends every part to `out`.
template <typename... Parts> void put(std::string &out, const Parts &...parts) {
  (out.append(parts), ...);
}

/// `text` with &, <, >, " and ' as entities: safe in element text and quoted attributes.
std::string escape(std::string_view text);
/// `value` with exactly `digits` decimals.
std::string fixed(double value, int digits);
/// A pixel coordinate: one decimal, "12" rather than "12.0".
std::string coord(double value);
/// "1,572,864": the exact count shown in tooltips.
std::string groupedDigits(int64_t value);
/// "96 B", "1.50 KiB", "12.3 MiB", "512 GiB": about three digits, powers of 2^10.
std::string binaryBytes(int64_t bytes);
/// A size for people, with the exact byte count on hover.
std::string sizeSpan(int64_t bytes);
/// "12.5%" of `whole`, or a dash when `whole` is not positive.
std::string percentOf(int64_t part, int64_t whole);

} // namespace bertc::html
