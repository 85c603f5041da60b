// Byte sizes as people write them ("6GB", "1.5GiB", "2MB", "4096"), parsed the same way by
// bertc's flags (--vram, --reserve, --host-ram) and a trainer's (--max-shard-size), so that
// one spelling means one number everywhere. Header-only, without exceptions or LLVM, for
// the compiler and the runtime alike.
#pragma once

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace bertc {

/// Parses a byte size: a number (decimals allowed) and an optional unit. Decimal
/// units: B, KB, MB, GB, TB (powers of 10^3, as Hugging Face's "5GB" shard size); binary
/// units: KiB, MiB, GiB, TiB (powers of 2^10). Units are case-insensitive; no unit means
/// bytes; spaces around the number and the unit are ignored. Returns nothing for anything
/// else (negative, empty, unknown unit, overflow).
inline std::optional<int64_t> parseByteSize(std::string_view text) {
  auto isSpace = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && isSpace(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back()))
    text.remove_suffix(1);
  size_t unitStart = 0;
  while (unitStart < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[unitStart])) || text[unitStart] == '.'))
    ++unitStart;
  std::string number(text.substr(0, unitStart));
  std::string unit;
  for (char c : text.substr(unitStart))
    unit += char(std::tolower(static_cast<unsigned char>(c)));
  while (!unit.empty() && isSpace(unit.front()))
    unit.erase(unit.begin());
  size_t points = 0;
  for (char c : number)
    points += c == '.';
  if (number.empty() || points > 1 || number == ".")
    return std::nullopt;
  double multiplier = unit == "" || unit == "b" ? 1.0
                      : unit == "kb"            ? 1e3
                      : unit == "mb"            ? 1e6
                      : unit == "gb"            ? 1e9
                      : unit == "tb"            ? 1e12
                      : unit == "kib"           ? 0x1p10
                      : unit == "mib"           ? 0x1p20
                      : unit == "gib"           ? 0x1p30
                      : unit == "tib"           ? 0x1p40
                                                : -1.0;
  if (multiplier < 0)
    return std::nullopt;
  double bytes = std::strtod(number.c_str(), nullptr) * multiplier;
  if (!std::isfinite(bytes) || bytes >= 0x1p62)
    return std::nullopt;
  return int64_t(std::llround(bytes));
}

} // namespace bertc
