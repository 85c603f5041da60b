//===- TomlSourceCheck.cpp - checks on a job file's bytes before TOML++ ---===//
//
// One pass over the text with the lexical states of TOML that may hold any character:
//   1. `#` starts a comment that runs to the end of the line;
//   2. a quote starts a string only where TOML allows one: first on its line (a key), or
//      after `=`, `[`, `{` or `,` (a value, an array element, a key in an inline table),
//      or after the `.` of a dotted key (a key being read: not after a `.` in a value).
//      A value that starts otherwise (a number, a boolean, a date, or an error) is bare:
//      TOML++ reads it up to whitespace, `,`, `]`, `}` or `#`, and a quote, `[`, `{` or `=`
//      in it (`203'''`, `1.x."`, `1.["`, `1{"`) is part of it, as it is for this pass;
//   3. `"""` and `'''` start multi-line strings, closed by the same three quotes (up to two
//      more quotes before them belong to the string); `\` escapes a character in `"""`,
//      and a non-ASCII character after it, or after the whitespace a line-ending `\`
//      trims, is a finding;
//   4. `"` and `'` start one-line strings, closed by the same quote or ended by the line;
//      `\` escapes a character in `"`;
//   5. `[` and `{` inside a value open an array or an inline table, `]` and `}` close the
//      innermost; a `}` that would close an array is a finding; a `[` that is the first
//      character of a line outside any value opens a table header, whose name is checked;
//   6. anywhere else a byte above 0x7F is a finding.
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
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '"' || c == '\'';
}

bool isNonAscii(char c) { return static_cast<unsigned char>(c) > 0x7F; }

/// The pass, over one text.
class SourceScanner {
public:
  explicit SourceScanner(StringRef text)
      // A UTF-8 byte order mark, which TOML++ skips, is no character of the first line.
      : text(text), at(text.starts_with("\xEF\xBB\xBF") ? 3 : 0), lineStart(at) {}

  std::optional<SourceProblem> run();

private:
  /// Moves `at` past the byte it is on, counting the line it ends.
  void advance();
  SourceProblem problemAt(size_t where, std::string message) const;
  /// Skips a string whose opening `quote` `at` is on, up to and including its closing;
  /// a problem when it holds an escape TOML++ cannot read safely.
  std::optional<SourceProblem> skipString(StringRef quote, bool escapes, bool multiLine);
  /// Whether a quote at `at` opens a string (rule 2).
  bool stringMayStart() const {
    return !inBareValue &&
           (lineBlank || StringRef("=[{,").contains(lastToken) || (lastToken == '.' && inKey));
  }
  /// Follows whether a key or a value is being read, over a byte outside strings, comments
  /// and bare values: a key from a line's start outside any value, from a `{` and after an
  /// inline table's `,`; a value from `=`, and after a `]` or `}` (an array or inline table
  /// is a value).
  void followKeyOrValue(char c);
  /// Follows a bare value (rule 2) over a byte outside strings and comments: it starts
  /// where a value does with anything but a quote, `[`, `{` or whitespace, and ends before
  /// whitespace, `,`, `]` or `}`.
  void followBareValue(char c);

  StringRef text;
  size_t at, lineStart;
  unsigned line = 1;
  std::string open;         // the `[` and `{` of the values open at `at`, innermost last
  bool lineBlank = true;    // nothing but spaces and tabs since the line's start
  char lastToken = 0;       // the last character outside comments and whitespace
  bool inKey = true;        // a key is being read, not a value
  bool inBareValue = false; // a bare value is being read (rule 2)
};

void SourceScanner::followKeyOrValue(char c) {
  if (c == '=' || c == ']' || c == '}')
    inKey = false;
  else if (c == '{' || (c == ',' && !open.empty() && open.back() == '{') ||
           (c == '\n' && open.empty()))
    inKey = true;
}

void SourceScanner::followBareValue(char c) {
  bool ends = StringRef(" \t\r\n,]}").contains(c);
  if (inBareValue && ends)
    inBareValue = false;
  else if (!inBareValue && !inKey && !ends && !StringRef("[{=\"'").contains(c))
    inBareValue = true;
}

void SourceScanner::advance() {
  char c = text[at];
  if (c == '\n') {
    ++line;
    lineStart = at + 1;
    lineBlank = true;
  } else if (c != ' ' && c != '\t' && c != '\r') {
    lineBlank = false;
    lastToken = c;
  }
  ++at;
}

SourceProblem SourceScanner::problemAt(size_t where, std::string message) const {
  // Columns count characters: UTF-8 continuation bytes (10xxxxxx) start none.
  unsigned column = 1;
  for (char before : text.slice(lineStart, where))
    column += (static_cast<unsigned char>(before) & 0xC0) != 0x80;
  return SourceProblem{{line, column}, std::move(message)};
}

std::optional<SourceProblem> SourceScanner::skipString(StringRef quote, bool escapes,
                                                       bool multiLine) {
  at += quote.size();
  lineBlank = false;
  lastToken = quote[0];
  while (at < text.size()) {
    if (text.substr(at).starts_with(quote)) {
      at += quote.size();
      while (multiLine && at < text.size() && text[at] == quote[0] &&
             text.substr(at, 3).count(quote[0]) <= 2)
        ++at;
      lastToken = quote[0];
      return std::nullopt;
    }
    if (!multiLine && text[at] == '\n')
      return std::nullopt;
    if (escapes && text[at] == '\\' && at + 1 < text.size()) {
      // TOML++ asks whether what follows a `\` in """ (after the whitespace a line-ending
      // `\` trims) is whitespace, which is undefined behaviour for most non-ASCII ones.
      size_t next = multiLine ? text.find_first_not_of(" \t\r\n", at + 1) : at + 1;
      if (multiLine && next != StringRef::npos && isNonAscii(text[next])) {
        while (at < next)
          advance();
        return problemAt(next, "non-ASCII character after a '\\' in a \"\"\" string (write "
                               "it as an escape, \\uXXXX)");
      }
      advance();
    }
    advance();
  }
  return std::nullopt;
}

std::optional<SourceProblem> SourceScanner::run() {
  while (at < text.size()) {
    char c = text[at];
    StringRef rest = text.substr(at);
    bool quote = c == '"' || c == '\'';
    if (c == '#') {
      inBareValue = false;
      while (at < text.size() && text[at] != '\n')
        ++at;
    } else if (quote && stringMayStart()) {
      bool multiLine = rest.starts_with("\"\"\"") || rest.starts_with("'''");
      if (std::optional<SourceProblem> problem =
              skipString(rest.take_front(multiLine ? 3 : 1), c == '"', multiLine))
        return problem;
    } else if (isNonAscii(c)) {
      return problemAt(at, "non-ASCII character outside a string or comment (TOML keys, table "
                           "names and values other than strings are ASCII)");
    } else if (c == '[' && open.empty() && lineBlank) {
      size_t name = text.find_first_not_of(" \t", at + 1);
      if (name != StringRef::npos && text[name] == '[' && name == at + 1)
        name = text.find_first_not_of(" \t", name + 1);
      // An empty name and the end of the file are errors TOML++ reports itself.
      if (name != StringRef::npos && text[name] != ']' && !startsKey(text[name]))
        return problemAt(name, "expected a table name (a bare key or a quoted one) after '['");
      advance();
    } else if (c == '}' && !open.empty() && open.back() == '[') {
      return problemAt(at, "'}' inside an array (expected a value, ',' or ']')");
    } else {
      // In a bare value no bracket opens or closes and no key begins.
      followBareValue(c);
      if (!inBareValue) {
        if (c == '[' || c == '{')
          open.push_back(c);
        else if ((c == ']' || c == '}') && !open.empty())
          open.pop_back();
        followKeyOrValue(c);
      }
      advance();
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<SourceProblem> bertc::findUnsafeTomlSource(StringRef text) {
  return SourceScanner(text).run();
}
