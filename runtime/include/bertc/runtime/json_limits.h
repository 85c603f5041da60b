// What bertc accepts of any JSON text before a parser sees it: at most kMaxJsonDepth levels
// of nesting (a parser or a printer that recurses per level overflows the stack on deeper
// input) and numbers within the range of a double (1e400 would become infinity or an
// unlocated library error). Header-only and exception-free, so that both the runtime and
// the compiler's frontend (built without exceptions) check JSON the same way.
#pragma once

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace bertc {

/// The deepest nesting of arrays and objects accepted (a BertConfig or a data row needs 3).
inline constexpr size_t kMaxJsonDepth = 64;

/// Where a JSON text exceeds a limit, and which.
struct JsonLimitIssue {
  size_t line = 1;         ///< 1-based line of the offending bracket or number
  size_t column = 1;       ///< 1-based byte column within that line
  std::string topLevelKey; ///< the key of the top-level object it lies under; "" if none
  std::string what;        ///< "nesting deeper than 64 levels", "number 1e400 is ..."
};

/// The first place `text` exceeds a limit, or nothing. One pass over the bytes that tracks
/// strings (with escapes), brackets and number tokens; it does not validate the JSON, which
/// the parser does afterwards.
inline std::optional<JsonLimitIssue> findJsonLimitIssue(std::string_view text) {
  size_t depth = 0, line = 1, lineStart = 0;
  std::string topLevelKey;
  auto issueAt = [&](size_t at, std::string what) {
    return JsonLimitIssue{line, at - lineStart + 1, topLevelKey, std::move(what)};
  };
  for (size_t at = 0; at < text.size(); ++at) {
    char c = text[at];
    if (c == '\n') {
      ++line;
      lineStart = at + 1;
    } else if (c == '"') {
      size_t begin = at + 1;
      for (++at; at < text.size() && text[at] != '"'; ++at)
        if (text[at] == '\\')
          ++at;
      // A string directly inside the top-level object followed by ':' is one of its keys.
      size_t next = text.find_first_not_of(" \t\r\n", at + 1);
      if (depth == 1 && next != std::string_view::npos && text[next] == ':')
        topLevelKey = std::string(text.substr(begin, std::min(at, text.size()) - begin));
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return issueAt(at, "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    } else if (c == ']' || c == '}') {
      depth -= depth > 0;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t end = text.find_first_not_of("0123456789+-.eE", at);
      std::string number(text.substr(at, end == std::string_view::npos ? end : end - at));
      if (!std::isfinite(std::strtod(number.c_str(), nullptr)))
        return issueAt(at, "number " + number +
                               " is out of range (a double holds at most 1.8e308 in magnitude)");
      at += number.size() - 1;
    }
  }
  return std::nullopt;
}

} // namespace bertc
