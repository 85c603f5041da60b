//===- BoundedFile.h - reading a small input file whole ----------*- C++ -*-===//
//
// Private to the frontend. The job file and a `from` folder's config.json are read whole
// into memory, so each kind has a size limit (docs/dsl.md, "Limits"): a path such as
// /dev/zero fails with a message instead of filling memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace bertc {

/// The limit of a job's TOML file and of config.json: 1 MiB.
inline constexpr uint64_t kMaxSmallInputBytes = uint64_t(1) << 20;

/// The bytes of the file at `path`, or an error saying why it cannot be read, or that it
/// is larger than `maxBytes` ("larger than 1 MiB, the limit for a job file" with `kind`
/// "a job file").
llvm::Expected<std::string> readFileUpTo(llvm::StringRef path, uint64_t maxBytes,
                                         llvm::StringRef kind);

/// The JSON object of the small file `path` (`kind` as readFileUpTo takes it, "a
/// config.json"), its nesting bounded before it is parsed; failure after an error at `loc`
/// that names the file and what is wrong.
mlir::FailureOr<llvm::json::Object> readJsonObjectFile(llvm::StringRef path, mlir::Location loc,
                                                       llvm::StringRef kind);

} // namespace bertc
