//===- HtmlText.cpp - text pieces of the memory page ----------------------===//

#include "HtmlText.h"

#include <cmath>
#include <cstdio>

namespace bertc::html {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

std::string coord(double value) {
  std::string text = fixed(value, 1);
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0)
    text.resize(text.size() - 2);
  return text;
}

std::string groupedDigits(int64_t value) {
  std::string digits = std::to_string(value);
  size_t first = digits[0] == '-' ? 1 : 0;
  std::string out = digits.substr(0, first);
  for (size_t i = first; i < digits.size(); ++i) {
    if (i > first && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

std::string binaryBytes(int64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = double(bytes);
  int unit = 0;
  while (std::fabs(value) >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0)
    return std::to_string(bytes) + " B";
  int digits = std::fabs(value) < 10 ? 2 : std::fabs(value) < 100 ? 1 : 0;
  return fixed(value, digits) + " " + units[unit];
}

std::string sizeSpan(int64_t bytes) {
  return "<span title=\"" + groupedDigits(bytes) + " bytes\">" + binaryBytes(bytes) + "</span>";
}

std::string percentOf(int64_t part, int64_t whole) {
  return whole > 0 ? fixed(100.0 * double(part) / double(whole), 1) + "%" : "&#8212;";
}

} // namespace bertc::html
