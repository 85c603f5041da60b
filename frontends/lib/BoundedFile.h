//===- BoundedFile.h - reading a small input file whole ----------*- C++ -*-===//
//
// Private to the frontend. The job file and a `from` folder's config.json are read whole
// into memory, so each kind has a size limit (docs/dsl.md, "Limits"): a path such as
// /dev/zero fails with a message instead of filling memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace bertc {

/// The limit of a job's TOML file and of config.json: 1 MiB.
inline constexpr uint64_t kMaxSmallInputBytes = uint64_t(1) << 20;

/// The bytes of the file at `path`, or an error saying why it cannot be read, or that it
/// is larger than `maxBytes` ("larger than 1 MiB, the limit for a job file" with `kind`
/// "a job file").
llvm::Expected<std::string> readFileUpTo(llvm::StringRef path, uint64_t maxBytes,
                                         llvm::StringRef kind);

} // namespace bertc
