//===- ByteSize.cpp - sizes like 6GB, 6GiB, 6000MB ------------------------===//

#include "bertc/Driver/ByteSize.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bertc {

std::optional<int64_t> parseByteSize(llvm::StringRef text) {
  text = text.trim();
  size_t unitStart = text.find_if([](char c) { return !(std::isdigit(c) || c == '.'); });
  llvm::StringRef number = text.substr(0, unitStart);
  llvm::StringRef unit = text.substr(std::min(unitStart, text.size())).trim();
  if (number.empty() || number.count('.') > 1 || number == ".")
    return std::nullopt;
  double multiplier = llvm::StringSwitch<double>(unit.lower())
                          .Cases("", "b", 1.0)
                          .Case("kb", 1e3)
                          .Case("mb", 1e6)
                          .Case("gb", 1e9)
                          .Case("tb", 1e12)
                          .Case("kib", 0x1p10)
                          .Case("mib", 0x1p20)
                          .Case("gib", 0x1p30)
                          .Case("tib", 0x1p40)
                          .Default(-1.0);
  if (multiplier < 0)
    return std::nullopt;
  double bytes = std::strtod(number.str().c_str(), nullptr) * multiplier;
  if (!std::isfinite(bytes) || bytes >= 0x1p62)
    return std::nullopt;
  return int64_t(std::llround(bytes));
}

std::string formatBytes(int64_t bytes) {
  static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1000.0 && unit < 4) {
    value /= 1000.0;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof(text), "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(text, sizeof(text), "%.2f %s", value, units[unit]);
  return text;
}

} // namespace bertc
