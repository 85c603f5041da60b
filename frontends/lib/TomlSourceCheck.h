//===- TomlSourceCheck.h - checks on a job file's bytes before TOML++ -*- C++ -*-===//
//
// Private to the frontend. TOML++ 3.3 reaches undefined behaviour on some non-ASCII bytes
// outside strings (a line `é = 1`), where TOML allows none anyway: such bytes are found
// here, before the text is handed to TOML++.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace bertc {

/// A place in a text: 1-based line, and 1-based column counted in UTF-8 characters.
struct TextPosition {
  unsigned line;
  unsigned column;
};

/// The first byte of `text` above 0x7F outside a string ("...", '...', """...""",
/// '''...''') and outside a comment, or nothing.
std::optional<TextPosition> findNonAsciiOutsideStrings(llvm::StringRef text);

} // namespace bertc
