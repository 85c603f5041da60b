//===- BoundedFile.cpp - reading a small input file whole -----------------===//
//
// Reads in chunks and stops one chunk past the limit, so that neither a large file nor a
// device without an end (whose reported size is 0) is ever held in memory whole.
//
//===----------------------------------------------------------------------===//

#include "BoundedFile.h"

#include "bertc/runtime/json_limits.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace bertc;

llvm::Expected<std::string> bertc::readFileUpTo(llvm::StringRef path, uint64_t maxBytes,
                                                llvm::StringRef kind) {
  llvm::Expected<llvm::sys::fs::file_t> file = llvm::sys::fs::openNativeFileForRead(path);
  if (!file)
    return file.takeError();
  auto close = llvm::make_scope_exit([&] { llvm::sys::fs::closeFile(*file); });
  std::string bytes;
  char chunk[64 * 1024];
  while (true) {
    llvm::Expected<size_t> read = llvm::sys::fs::readNativeFile(*file, chunk);
    if (!read)
      return read.takeError();
    if (*read == 0)
      return bytes;
    bytes.append(chunk, *read);
    if (bytes.size() > maxBytes)
      return llvm::createStringError(
          std::make_error_code(std::errc::file_too_large),
          llvm::formatv("larger than {0} MiB, the limit for {1}", maxBytes >> 20, kind).str());
  }
}

mlir::FailureOr<llvm::json::Object>
bertc::readJsonObjectFile(llvm::StringRef path, mlir::Location loc, llvm::StringRef kind) {
  llvm::Expected<std::string> bytes = readFileUpTo(path, kMaxSmallInputBytes, kind);
  if (!bytes)
    return mlir::emitError(loc) << "cannot read '" << path
                                << "': " << llvm::toString(bytes.takeError());
  llvm::StringRef text = *bytes;
  // llvm::json::parse recurses per nesting level: bound the depth before it runs.
  if (std::optional<JsonLimitIssue> issue = findJsonLimitIssue({text.data(), text.size()}))
    return mlir::emitError(loc) << "malformed '" << path << "' at line " << issue->line
                                << ", column " << issue->column << ": " << issue->what;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return mlir::emitError(loc) << "malformed '" << path
                                << "': " << llvm::toString(parsed.takeError());
  llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return mlir::emitError(loc) << "malformed '" << path << "': expected a JSON object";
  return std::move(*object);
}
