//===- TomlSourceCheck.h - checks on a job file's bytes before TOML++ -*- C++ -*-===//
//
// Private to the frontend. TOML++ 3.3 reaches undefined behaviour on some inputs: where it
// asks whether a non-ASCII character is whitespace (most are beyond its table: non-ASCII
// bytes outside strings, `a = 203'''é`, and after a `\` in a """ string, even the valid
// line-ending `\` before `é`), a table header whose name starts with neither a bare-key
// character nor a quote (`[=]`, `[#]`, `[\0]`) and a `}` where an array needs a value
// (`[}`, `[1,}`); the parser assumes the last two cannot happen. Such spots are found
// here, before the text is handed to TOML++.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace bertc {

/// A place in a text: 1-based line, and 1-based column counted in UTF-8 characters.
struct TextPosition {
  unsigned line;
  unsigned column;
};

/// A spot TOML++ must not be given, and what is wrong there.
struct SourceProblem {
  TextPosition position;
  std::string message;
};

/// The first of: a byte of `text` above 0x7F outside a string ("...", '...', """...""",
/// '''...''', each opened where TOML allows a string) and outside a comment, or after a `\`
/// in a """ string (and the whitespace a line-ending `\` trims); a table header (`[` or
/// `[[` opening a line outside any value) whose name starts with something other than a
/// bare-key character (A-Z a-z 0-9 _ -) or a quote; a `}` inside an array. Nothing when
/// there is none.
std::optional<SourceProblem> findUnsafeTomlSource(llvm::StringRef text);

} // namespace bertc
