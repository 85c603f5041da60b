//===- TomlTable.h - typed, located access to TOML tables --------*- C++ -*-===//
//
// Private to the frontend. TomlFile turns TOML++ source positions into MLIR locations
// and remembers whether anything failed; TableReader reads one table's keys with type
// checks, rejects unknown keys (suggesting near misses) and records each key's location.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"

#include <toml++/toml.h>

namespace bertc {

/// The TOML file being read: where its diagnostics point and whether any was an error.
class TomlFile {
public:
  TomlFile(llvm::StringRef path, mlir::MLIRContext &ctx) : path(path.str()), ctx(ctx) {}

  /// `path:line:col` of a TOML++ position; line 1, column 1 when TOML++ has none.
  mlir::FileLineColLoc locate(const toml::source_position &position) const;
  /// The start of the file.
  mlir::FileLineColLoc start() const;
  /// Emits an error at `loc` and remembers that reading failed.
  mlir::InFlightDiagnostic error(mlir::Location loc);

  /// Remembers a failure reported elsewhere (e.g. by the config.json reader).
  void noteFailure() { failed = true; }

  mlir::MLIRContext &context() const { return ctx; }
  bool hasErrors() const { return failed; }

private:
  std::string path;
  mlir::MLIRContext &ctx;
  bool failed = false;
};

/// The entry of `candidates` within typo distance of `word`, or an empty string.
llvm::StringRef closestMatch(llvm::StringRef word, llvm::ArrayRef<llvm::StringRef> candidates);

/// The value of an integer or float node; nothing for other types.
std::optional<double> asNumber(const toml::node &value);

/// `value` as a person writes it: 0.1, 2e-05, 1.
std::string formatNumber(double value);

/// "a or b", "a, b or c": for "expected ..." messages.
std::string joinAlternatives(llvm::ArrayRef<llvm::StringRef> words);

/// Reads the keys of one table (e.g. [model]) into spec fields. Each getter leaves its
/// output untouched when the key is absent or has the wrong type (which is reported).
class TableReader {
public:
  /// `table` may be null (the table is absent). Reports every key outside `knownKeys`.
  TableReader(TomlFile &file, const toml::table *table, llvm::StringRef tableName,
              llvm::ArrayRef<llvm::StringRef> knownKeys, KeyLocations &locations);

  /// Each getter returns true when `key` is present with the right type and was read.
  bool readInteger(llvm::StringRef key, int64_t &out);
  /// Integers are accepted where a number is expected; nan and inf are reported.
  bool readNumber(llvm::StringRef key, double &out);
  bool readString(llvm::StringRef key, std::string &out);
  bool readBoolean(llvm::StringRef key, bool &out);
  bool readStrings(llvm::StringRef key, std::vector<std::string> &out);
  /// The value of `key` with its location recorded, for arrays; null when absent.
  const toml::node *readNode(llvm::StringRef key);

  /// Reports that `value` (the value of `key` or one of its elements) is not `expected`:
  /// "key 'train.lr' must be a number, got string".
  void reportType(llvm::StringRef key, const toml::node &value, llvm::StringRef expected);
  /// "train.lr" for "lr".
  std::string qualified(llvm::StringRef key) const;
  TomlFile &tomlFile() { return file; }

private:
  /// Reads `key` through `convert` (a node -> std::optional<T>), reporting a value that
  /// does not convert as not being `expected`.
  template <typename T, typename Convert>
  bool readTyped(llvm::StringRef key, T &out, Convert convert, llvm::StringRef expected);

  TomlFile &file;
  const toml::table *table;
  std::string tableName;
  KeyLocations &locations;
};

} // namespace bertc
