//===- ByteSize.h - sizes like 6GB, 6GiB, 6000MB -----------------*- C++ -*-===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace bertc {

/// Parses a byte size: a number (decimals allowed) and an optional unit. Decimal
/// units: B, KB, MB, GB, TB (powers of 10^3); binary units: KiB, MiB, GiB, TiB
/// (powers of 2^10). Units are case-insensitive; no unit means bytes. Returns nothing
/// for anything else (negative, empty, unknown unit, overflow).
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// A size for people: "1.23 GB", "512.0 MB", "96 B" (decimal units, as --vram's GB).
std::string formatBytes(int64_t bytes);

} // namespace bertc
