//===- ConfigReader.h - fields of a Hugging Face config.json ----*- C++ -*-===//
//
// Internal to the frontend library: the reader through which HFConfig.cpp and each model
// family read a `from` folder's config.json into the job's spec, every problem reported at
// the `from` key, naming the file and the field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/JSON.h"

namespace bertc {

using llvm::StringRef;

/// Copies a config.json's fields into spec fields, recording the `from` key as their
/// location.
class ConfigReader {
public:
  ConfigReader(const llvm::json::Object &config, StringRef configPath, mlir::FileLineColLoc fromLoc)
      : config(config), configPath(configPath), fromLoc(fromLoc) {}

  /// Reads the integer `field` into `out` when present; `dslKey` names it in `locations`.
  void readInteger(StringRef field, int64_t &out, StringRef dslKey, KeyLocations &locations) {
    const llvm::json::Value *value = config.get(field);
    if (!value)
      return;
    if (std::optional<int64_t> integer = value->getAsInteger()) {
      out = *integer;
      locations.keys[dslKey] = fromLoc;
      locations.configFields[dslKey] = field.str();
    } else {
      error() << "'" << field << "' must be an integer";
    }
  }

  /// Reads the number `field` into `out` when present and not null; true if it did.
  bool readNumber(StringRef field, double &out, StringRef dslKey, KeyLocations &locations) {
    const llvm::json::Value *value = config.get(field);
    if (!value || value->kind() == llvm::json::Value::Null)
      return false;
    std::optional<double> number = value->getAsNumber();
    if (!number) {
      error() << "'" << field << "' must be a number";
      return false;
    }
    out = *number;
    locations.keys[dslKey] = fromLoc;
    locations.configFields[dslKey] = field.str();
    return true;
  }

  /// Fails unless the string `field` is absent or `expected` (the one value bertc builds).
  void requireString(StringRef field, StringRef expected) {
    const llvm::json::Value *value = config.get(field);
    if (!value)
      return;
    std::optional<StringRef> actual = value->getAsString();
    if (actual && *actual == expected)
      return;
    std::string written;
    llvm::raw_string_ostream(written) << *value;
    error() << "'" << field << "' must be \"" << expected
            << "\" (the architecture bertc builds), got " << written;
  }

  /// A field that must hold `expected` when present: a setting bertc has one value of.
  void requireInteger(StringRef field, int64_t expected, StringRef why) {
    const llvm::json::Value *value = config.get(field);
    if (!value || value->getAsInteger() == expected)
      return;
    std::string written;
    llvm::raw_string_ostream(written) << *value;
    error() << "'" << field << "' must be " << expected << " (" << why << "), got " << written;
  }

  /// Reads the boolean `field` into `out` when present and not null.
  void readBool(StringRef field, bool &out) {
    const llvm::json::Value *value = config.get(field);
    if (!value || value->kind() == llvm::json::Value::Null)
      return;
    if (std::optional<bool> flag = value->getAsBoolean())
      out = *flag;
    else
      error() << "'" << field << "' must be true or false";
  }

  /// A token id field: an integer or a list of them; none when absent or null.
  std::vector<int64_t> readTokenIds(StringRef field) {
    const llvm::json::Value *value = config.get(field);
    if (!value || value->kind() == llvm::json::Value::Null)
      return {};
    if (std::optional<int64_t> id = value->getAsInteger())
      return {*id};
    std::vector<int64_t> ids;
    const llvm::json::Array *list = value->getAsArray();
    if (list)
      for (const llvm::json::Value &entry : *list)
        if (std::optional<int64_t> id = entry.getAsInteger())
          ids.push_back(*id);
    if (ids.empty() || ids.size() != list->size()) {
      error() << "'" << field << "' must be a token id or a list of them";
      return {};
    }
    return ids;
  }

  /// A token id field that holds one id; none when absent or null.
  std::optional<int64_t> readTokenId(StringRef field) {
    std::vector<int64_t> ids = readTokenIds(field);
    if (ids.size() > 1)
      error() << "'" << field << "' must be one token id";
    return ids.empty() ? std::nullopt : std::optional<int64_t>(ids.front());
  }

  /// The object `field` (rope_scaling, quantization_config); null when absent or null, or
  /// after an error when it is not an object.
  const llvm::json::Object *readObject(StringRef field) {
    const llvm::json::Value *value = config.get(field);
    if (!value || value->kind() == llvm::json::Value::Null)
      return nullptr;
    const llvm::json::Object *object = value->getAsObject();
    if (!object)
      error() << "'" << field << "' must be an object or null";
    return object;
  }

  /// Reports a problem with config.json at the `from` key.
  mlir::InFlightDiagnostic error() {
    failed = true;
    mlir::InFlightDiagnostic diag = mlir::emitError(fromLoc);
    diag << "in '" << configPath << "': ";
    return diag;
  }

  bool hasErrors() const { return failed; }

  /// The whole config.json.
  const llvm::json::Object &fields() const { return config; }

private:
  const llvm::json::Object &config;
  StringRef configPath;
  mlir::FileLineColLoc fromLoc;
  bool failed = false;
};

} // namespace bertc
