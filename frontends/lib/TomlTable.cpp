//===- TomlTable.cpp - typed, located access to TOML tables ---------------===//
//
// The building blocks the TOML frontend reads tables with: locations from TOML++
// positions, typo suggestions, and getters that check a value's type before use.
//
//===----------------------------------------------------------------------===//

#include "TomlTable.h"

#include <cmath>
#include <cstdio>
#include <limits>

using namespace bertc;

mlir::FileLineColLoc TomlFile::locate(const toml::source_position &position) const {
  if (!position)
    return start();
  return mlir::FileLineColLoc::get(&ctx, path, position.line, position.column);
}

mlir::FileLineColLoc TomlFile::start() const { return mlir::FileLineColLoc::get(&ctx, path, 1, 1); }

mlir::InFlightDiagnostic TomlFile::error(mlir::Location loc) {
  failed = true;
  return mlir::emitError(loc);
}

llvm::StringRef bertc::closestMatch(llvm::StringRef word,
                                    llvm::ArrayRef<llvm::StringRef> candidates) {
  llvm::StringRef best;
  unsigned bestDistance = std::numeric_limits<unsigned>::max();
  for (llvm::StringRef candidate : candidates) {
    // A typo changes about a third of a word (a swap of two letters counts as two).
    unsigned allowed = std::max<unsigned>(1, (candidate.size() + 2) / 3);
    unsigned distance = word.edit_distance(candidate, /*AllowReplacements=*/true, allowed);
    if (distance > allowed || distance > bestDistance)
      continue;
    // Two equally close candidates: suggesting either one would be a guess.
    best = distance == bestDistance ? llvm::StringRef() : candidate;
    bestDistance = distance;
  }
  return best;
}

std::string bertc::joinAlternatives(llvm::ArrayRef<llvm::StringRef> words) {
  std::string joined;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0)
      joined += i + 1 == words.size() ? " or " : ", ";
    joined += words[i].str();
  }
  return joined;
}

std::optional<double> bertc::asNumber(const toml::node &value) {
  if (const auto *integer = value.as_integer())
    return static_cast<double>(integer->get());
  if (const auto *floating = value.as_floating_point())
    return floating->get();
  return std::nullopt;
}

std::string bertc::formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// How a TOML value's type reads in a message ("got string").
static llvm::StringRef typeName(const toml::node &value) {
  switch (value.type()) {
  case toml::node_type::table:
    return "table";
  case toml::node_type::array:
    return "array";
  case toml::node_type::string:
    return "string";
  case toml::node_type::integer:
    return "integer";
  case toml::node_type::floating_point:
    return "float";
  case toml::node_type::boolean:
    return "boolean";
  case toml::node_type::date:
    return "date";
  case toml::node_type::time:
    return "time";
  case toml::node_type::date_time:
    return "date-time";
  case toml::node_type::none:
    break;
  }
  return "nothing";
}

TableReader::TableReader(TomlFile &file, const toml::table *table, llvm::StringRef tableName,
                         llvm::ArrayRef<llvm::StringRef> knownKeys, KeyLocations &locations)
    : file(file), table(table), tableName(tableName.str()), locations(locations) {
  locations.file = file.start();
  if (!table)
    return;
  locations.table = file.locate(table->source().begin);
  for (const auto &[key, value] : *table) {
    llvm::StringRef name(key.str());
    if (llvm::is_contained(knownKeys, name))
      continue;
    mlir::InFlightDiagnostic diag = file.error(file.locate(key.source().begin));
    diag << "unknown key '" << name << "' in [" << tableName << "]";
    llvm::StringRef suggestion = closestMatch(name, knownKeys);
    if (!suggestion.empty())
      diag << "; did you mean '" << suggestion << "'?";
    else
      diag << " (expected " << joinAlternatives(knownKeys) << ")";
  }
}

std::string TableReader::qualified(llvm::StringRef key) const {
  return tableName + "." + key.str();
}

const toml::node *TableReader::readNode(llvm::StringRef key) {
  if (!table)
    return nullptr;
  auto entry = table->find(std::string_view(key.data(), key.size()));
  if (entry == table->end())
    return nullptr;
  locations.keys[key] = file.locate(entry->first.source().begin);
  locations.configFields.erase(key); // written here, it overrides config.json
  return &entry->second;
}

void TableReader::reportType(llvm::StringRef key, const toml::node &value,
                             llvm::StringRef expected) {
  file.error(file.locate(value.source().begin))
      << "key '" << qualified(key) << "' must be " << expected << ", got " << typeName(value);
}

namespace {

/// The value of a TOML leaf of type `Leaf`, or nothing for any other node.
template <typename Leaf, typename T> std::optional<T> leafValue(const toml::node &value) {
  if (const auto *leaf = value.as<Leaf>())
    return T(leaf->get());
  return std::nullopt;
}

} // namespace

template <typename T, typename Convert>
bool TableReader::readTyped(llvm::StringRef key, T &out, Convert convert,
                            llvm::StringRef expected) {
  const toml::node *value = readNode(key);
  if (!value)
    return false;
  if (std::optional<T> converted = convert(*value)) {
    out = *converted;
    return true;
  }
  reportType(key, *value, expected);
  return false;
}

bool TableReader::readInteger(llvm::StringRef key, int64_t &out) {
  return readTyped(key, out, leafValue<int64_t, int64_t>, "an integer");
}

bool TableReader::readNumber(llvm::StringRef key, double &out) {
  double value;
  if (!readTyped(key, value, asNumber, "a number"))
    return false;
  if (!std::isfinite(value)) {
    file.error(locations.keys[key])
        << "key '" << qualified(key) << "' must be a finite number, got " << formatNumber(value);
    return false;
  }
  out = value;
  return true;
}

bool TableReader::readString(llvm::StringRef key, std::string &out) {
  return readTyped(key, out, leafValue<std::string, std::string>, "a string");
}

bool TableReader::readBoolean(llvm::StringRef key, bool &out) {
  return readTyped(key, out, leafValue<bool, bool>, "a boolean");
}

bool TableReader::readStrings(llvm::StringRef key, std::vector<std::string> &out) {
  return readTyped(
      key, out,
      [](const toml::node &value) -> std::optional<std::vector<std::string>> {
        const toml::array *entries = value.as_array();
        if (!entries)
          return std::nullopt;
        std::vector<std::string> strings;
        for (const toml::node &entry : *entries) {
          const auto *string = entry.as_string();
          if (!string)
            return std::nullopt;
          strings.push_back(string->get());
        }
        return strings;
      },
      "an array of strings");
}
