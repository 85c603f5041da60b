//===- ByteSize.cpp - sizes for people: 1.23 GB ---------------------------===//

#include "bertc/Driver/ByteSize.h"

#include <cstdio>

namespace bertc {

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
