//===- TomlSourceCheck.cpp - checks on a job file's bytes before TOML++ ---===//
//
// One pass over the text with the lexical states of TOML that may hold any character:
//   1. `#` starts a comment that runs to the end of the line;
//   2. `"""` and `'''` start multi-line strings, closed by the same three quotes (up to two
//      more quotes before them belong to the string); `\` escapes a character in `"""`;
//   3. `"` and `'` start one-line strings, closed by the same quote or ended by the line;
//      `\` escapes a character in `"`;
//   4. anywhere else a byte above 0x7F is the finding.
// Malformed strings are left for TOML++ to report; this pass only has to be safe on them.
//
//===----------------------------------------------------------------------===//

#include "TomlSourceCheck.h"

using namespace bertc;
using llvm::StringRef;

std::optional<TextPosition> bertc::findNonAsciiOutsideStrings(StringRef text) {
  // A UTF-8 byte order mark, which TOML++ skips, is no character of the first line.
  size_t at = text.starts_with("\xEF\xBB\xBF") ? 3 : 0, lineStart = at;
  unsigned line = 1;
  // Moves `at` past the byte it is on, counting the line it ends.
  auto advance = [&] {
    if (text[at] == '\n') {
      ++line;
      lineStart = at + 1;
    }
    ++at;
  };
  // Skips a string whose opening `quote` `at` is on, up to and including its closing.
  auto skipString = [&](StringRef quote, bool escapes, bool multiLine) {
    at += quote.size();
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
      // Columns count characters: UTF-8 continuation bytes (10xxxxxx) start none.
      unsigned column = 1;
      for (char before : text.slice(lineStart, at))
        column += (static_cast<unsigned char>(before) & 0xC0) != 0x80;
      return TextPosition{line, column};
    } else {
      advance();
    }
  }
  return std::nullopt;
}
