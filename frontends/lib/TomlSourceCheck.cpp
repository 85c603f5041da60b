//===- TomlSourceCheck.cpp - checks on a job file's bytes before TOML++ ---===//
//
// One pass over the text with the lexical states of TOML that may hold any character:
//   1. `#` starts a comment that runs to the end of the line;
//   2. `"""` and `'''` start multi-line strings, closed by the same three quotes (up to two
//      more quotes before them belong to the string); `\` escapes a character in `"""`;
//   3. `"` and `'` start one-line strings, closed by the same quote or ended by the line;
//      `\` escapes a character in `"`;
//   4. `[` and `{` inside a value open an array or an inline table, `]` and `}` close the
//      innermost; a `}` that would close an array is a finding; a `[` that is the first
//      character of a line outside any value opens a table header, whose name is checked;
//   5. anywhere else a byte above 0x7F is a finding.
// Malformed strings and brackets are left for TOML++ to report (it stops at its first
// error, so nothing after one reaches it); this pass only has to be safe on them.
//
//===----------------------------------------------------------------------===//

#include "TomlSourceCheck.h"

#include <string>

using namespace bertc;
using llvm::StringRef;

namespace {

/// What TOML allows to start a key: a bare-key character or a quote.
bool startsKey(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-' || c == '"' || c == '\'';
}

} // namespace

std::optional<SourceProblem> bertc::findUnsafeTomlSource(StringRef text) {
  // A UTF-8 byte order mark, which TOML++ skips, is no character of the first line.
  size_t at = text.starts_with("\xEF\xBB\xBF") ? 3 : 0, lineStart = at;
  unsigned line = 1;
  std::string open;         // the `[` and `{` of the values open at `at`, innermost last
  bool lineBlank = true;    // nothing but spaces and tabs since the line's start
  // Moves `at` past the byte it is on, counting the line it ends.
  auto advance = [&] {
    if (text[at] == '\n') {
      ++line;
      lineStart = at + 1;
      lineBlank = true;
    } else if (text[at] != ' ' && text[at] != '\t') {
      lineBlank = false;
    }
    ++at;
  };
  auto problemAt = [&](size_t where, std::string message) {
    // Columns count characters: UTF-8 continuation bytes (10xxxxxx) start none.
    unsigned column = 1;
    for (char before : text.slice(lineStart, where))
      column += (static_cast<unsigned char>(before) & 0xC0) != 0x80;
    return SourceProblem{{line, column}, std::move(message)};
  };
  // Skips a string whose opening `quote` `at` is on, up to and including its closing.
  auto skipString = [&](StringRef quote, bool escapes, bool multiLine) {
    at += quote.size();
    lineBlank = false;
    while (at < text.size()) {
      if (text.substr(at).starts_with(quote)) {
        at += quote.size();
        while (multiLine && at < text.size() && text[at] == quote[0] &&
               text.substr(at, 3).count(quote[0]) <= 2)
          ++at;
        return;
      }
      if (!multiLine && text[at] == '\n')
        return;
      if (escapes && text[at] == '\\' && at + 1 < text.size())
        advance();
      advance();
    }
  };
  // The first character of a table header's name, after `[` or `[[` and spaces, if any.
  auto tableNameStart = [&](size_t open) {
    size_t name = text.find_first_not_of(" \t", open + 1);
    if (name != StringRef::npos && text[name] == '[' && name == open + 1)
      name = text.find_first_not_of(" \t", name + 1);
    return name;
  };
  while (at < text.size()) {
    char c = text[at];
    StringRef rest = text.substr(at);
    if (c == '#') {
      while (at < text.size() && text[at] != '\n')
        ++at;
    } else if (rest.starts_with("\"\"\"") || rest.starts_with("'''")) {
      skipString(rest.take_front(3), c == '"', /*multiLine=*/true);
    } else if (c == '"' || c == '\'') {
      skipString(rest.take_front(1), c == '"', /*multiLine=*/false);
    } else if (static_cast<unsigned char>(c) > 0x7F) {
      return problemAt(at, "non-ASCII character outside a string or comment (TOML keys, table "
                           "names and values other than strings are ASCII)");
    } else if (c == '[' && open.empty() && lineBlank) {
      size_t name = tableNameStart(at);
      // An empty name and the end of the file are errors TOML++ reports itself.
      if (name != StringRef::npos && text[name] != ']' && !startsKey(text[name]))
        return problemAt(name, "expected a table name (a bare key or a quoted one) after '['");
      advance();
    } else if (c == '}' && !open.empty() && open.back() == '[') {
      return problemAt(at, "'}' inside an array (expected a value, ',' or ']')");
    } else {
      if (c == '[' || c == '{')
        open.push_back(c);
      else if ((c == ']' || c == '}') && !open.empty())
        open.pop_back();
      advance();
    }
  }
  return std::nullopt;
}
