// Readers of CSV, TSV and JSONL into a TextTable, and its typed field accessors. A whole
// file is read into memory first; each reader then walks it once, counting lines, so that
// every row and every error knows its source line.
#include "bertc/runtime/text_table.h"

#include "bertc/runtime/input_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace bertc {
namespace {

/// A header or data record of a CSV/TSV file, before it is matched with the header.
struct Record {
  int64_t line;
  std::vector<std::string> fields;
};

std::string located(const std::string &path, int64_t line) {
  return path + ":" + std::to_string(line);
}

/// "1 field", "3 fields".
std::string count(size_t n, const std::string &noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string lowerAscii(std::string_view text) {
  std::string lower(text);
  for (char &c : lower)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

/// Splits RFC 4180 text into records:
///  1. At the start of a record, an empty line (LF or CRLF) is skipped; a lone CR is data.
///  2. A field starting with a quote runs to the next quote not doubled; "" inside stands
///     for one quote, and commas and line breaks inside are data (counted as lines). The
///     closing quote must be followed by a comma, a line end or the end of the file.
///  3. Any other field runs to the next comma, CRLF, LF or the end of the file, literally.
///  4. A comma starts the next field of the record; a line end or the end of the file ends it.
std::vector<Record> splitCsv(const std::string &path, const std::string &text) {
  std::vector<Record> records;
  size_t pos = 0, end = text.size();
  int64_t line = 1;
  auto atLineEnd = [&](size_t at) {
    return at < end &&
           (text[at] == '\n' || (text[at] == '\r' && at + 1 < end && text[at + 1] == '\n'));
  };
  auto skipLineEnd = [&] {
    pos += text[pos] == '\r' ? 2 : 1;
    ++line;
  };
  while (pos < end) {
    if (atLineEnd(pos)) {
      skipLineEnd();
      continue;
    }
    Record record{line, {}};
    while (true) {
      std::string field;
      if (text[pos] == '"') {
        int64_t openLine = line;
        for (++pos;; ++pos) {
          if (pos == end)
            throw DataError(located(path, openLine) + ": quoted field is never closed");
          if (text[pos] == '"' && (pos + 1 == end || text[pos + 1] != '"'))
            break;
          if (text[pos] == '"')
            ++pos; // "" stands for one quote
          else if (text[pos] == '\n')
            ++line;
          field += text[pos];
        }
        ++pos; // past the closing quote
        if (pos < end && text[pos] != ',' && !atLineEnd(pos))
          throw DataError(located(path, line) + ": text after the closing quote of a field");
      } else {
        while (pos < end && text[pos] != ',' && !atLineEnd(pos))
          field += text[pos++];
      }
      record.fields.push_back(std::move(field));
      if (pos < end && text[pos] == ',') {
        ++pos;
        if (pos < end)
          continue;
        record.fields.emplace_back(); // a comma ending the file ends an empty field
      }
      break;
    }
    if (pos < end)
      skipLineEnd();
    records.push_back(std::move(record));
  }
  return records;
}

/// Splits GLUE-style TSV text into records: one per non-empty line (LF or CRLF), fields
/// split on tabs and kept literally.
std::vector<Record> splitTsv(const std::string &text) {
  std::vector<Record> records;
  forEachLine(text, [&](int64_t line, std::string_view content) {
    if (!content.empty() && content.back() == '\r')
      content.remove_suffix(1);
    if (content.empty())
      return;
    Record record{line, {}};
    for (size_t start = 0;;) {
      size_t tab = std::min(content.find('\t', start), content.size());
      record.fields.emplace_back(content.substr(start, tab - start));
      if (tab == content.size())
        break;
      start = tab + 1;
    }
    records.push_back(std::move(record));
  });
  return records;
}

/// The table of a CSV/TSV file: the first record names the columns, every other record is
/// a row with exactly as many fields.
TextTable tableFromRecords(const std::string &path, std::vector<Record> records) {
  if (records.empty())
    throw DataError(path + ": empty file: no header row");
  const Record &header = records.front();
  for (size_t i = 0; i < header.fields.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (header.fields[i] == header.fields[j])
        throw DataError(located(path, header.line) + ": column '" + header.fields[i] +
                        "' appears twice in the header");
  if (records.size() == 1)
    throw DataError(path + ": no rows after the header");
  std::vector<TableRow> rows;
  rows.reserve(records.size() - 1);
  for (size_t r = 1; r < records.size(); ++r) {
    Record &record = records[r];
    if (record.fields.size() != header.fields.size())
      throw DataError(located(path, record.line) + ": " + count(record.fields.size(), "field") +
                      ", but the header has " + count(header.fields.size(), "column"));
    TableRow row{record.line, {}};
    row.fields.reserve(record.fields.size());
    for (std::string &field : record.fields)
      row.fields.emplace_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return TextTable(path, std::move(records.front().fields), std::move(rows));
}

/// How a JSON value is kept as a field (see Field).
Field fieldOfJson(const nlohmann::ordered_json &value) {
  if (value.is_null())
    return std::monostate{};
  if (value.is_string())
    return value.get<std::string>();
  if (value.is_number() || value.is_boolean())
    return value.dump();
  if (value.is_array()) {
    std::vector<int64_t> ids;
    ids.reserve(value.size());
    for (const auto &element : value) {
      if (!element.is_number_integer() ||
          (element.is_number_unsigned() && element.get<uint64_t>() > uint64_t(INT64_MAX)))
        return UnreadableField{"array"};
      ids.push_back(element.get<int64_t>());
    }
    return ids;
  }
  return UnreadableField{value.type_name()};
}

/// The table of a JSONL file: one row per non-blank line, columns in order of first use.
TextTable loadJsonl(const std::string &path, const std::string &text) {
  std::vector<std::string> columns;
  std::unordered_map<std::string, size_t> columnIndex;
  std::vector<TableRow> rows;
  forEachLine(text, [&](int64_t line, std::string_view content) {
    if (content.find_first_not_of(" \t\r") == std::string_view::npos)
      return;
    nlohmann::ordered_json object =
        parseJsonLine<DataError, nlohmann::ordered_json>(content, located(path, line));
    if (!object.is_object())
      throw DataError(located(path, line) + ": a row must be a JSON object, got " +
                      object.type_name());
    TableRow row{line, std::vector<Field>(columns.size())};
    for (const auto &[key, value] : object.items()) {
      auto [at, added] = columnIndex.try_emplace(key, columns.size());
      if (added) {
        columns.push_back(key);
        row.fields.emplace_back();
      }
      row.fields[at->second] = fieldOfJson(value);
    }
    rows.push_back(std::move(row));
  });
  if (rows.empty())
    throw DataError(path + ": no rows");
  for (TableRow &row : rows)
    row.fields.resize(columns.size());
  return TextTable(path, std::move(columns), std::move(rows));
}

/// Edit distance allowing insertions, deletions, substitutions and swaps of neighbours
/// (optimal string alignment).
size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

/// What a field holds, for messages: "a list of integers", "a JSON object", ...
std::string describe(const Field &field) {
  if (std::holds_alternative<std::string>(field))
    return "text";
  if (std::holds_alternative<std::vector<int64_t>>(field))
    return "a list of integers";
  const std::string &type = std::get<UnreadableField>(field).jsonType;
  return type == "array" ? "a JSON array that is not all integers" : "a JSON " + type;
}

} // namespace

TextTable::TextTable(std::string path, std::vector<std::string> columns, std::vector<TableRow> rows)
    : path_(std::move(path)), columns_(std::move(columns)), rows_(std::move(rows)) {}

bool TextTable::hasColumn(std::string_view name) const {
  return std::find(columns_.begin(), columns_.end(), name) != columns_.end();
}

size_t TextTable::column(std::string_view name) const {
  auto found = std::find(columns_.begin(), columns_.end(), name);
  if (found != columns_.end())
    return size_t(found - columns_.begin());
  std::string message = path_ + ": no column '" + std::string(name) + "'; columns are: ";
  const std::string *closest = nullptr;
  size_t closestDistance = std::max<size_t>(1, name.size() / 3); // farthest still suggested
  std::string wanted = lowerAscii(name);
  for (const std::string &candidate : columns_) {
    message += (&candidate == &columns_.front() ? "" : ", ") + candidate;
    size_t distance = editDistance(wanted, lowerAscii(candidate));
    if (distance <= closestDistance && (!closest || distance < closestDistance)) {
      closest = &candidate;
      closestDistance = distance;
    }
  }
  if (closest)
    message += " (did you mean '" + *closest + "'?)";
  throw DataError(message);
}

std::string TextTable::where(size_t row) const { return located(path_, rows_[row].line); }

const Field &TextTable::field(size_t row, size_t column) const {
  const Field &value = rows_[row].fields[column];
  if (std::holds_alternative<std::monostate>(value))
    throw DataError(where(row) + ": the row has no '" + columns_[column] + "'");
  return value;
}

const std::string &TextTable::text(size_t row, size_t column) const {
  const Field &value = field(row, column);
  if (!std::holds_alternative<std::string>(value))
    throw DataError(where(row) + ": '" + columns_[column] + "' is " + describe(value) +
                    ", not text");
  return std::get<std::string>(value);
}

const std::vector<int64_t> &TextTable::ids(size_t row, size_t column) const {
  const Field &value = field(row, column);
  if (!std::holds_alternative<std::vector<int64_t>>(value))
    throw DataError(where(row) + ": '" + columns_[column] + "' is " + describe(value) +
                    ", not a list of integers");
  return std::get<std::vector<int64_t>>(value);
}

int64_t TextTable::intLabel(size_t row, size_t column, int64_t numLabels) const {
  const std::string &value = text(row, column);
  int64_t label = -1;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), label);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || label < 0 ||
      label >= numLabels)
    throw DataError(where(row) + ": " + columns_[column] + " '" + value +
                    "' is not an integer in [0, " + std::to_string(numLabels) + ")");
  return label;
}

float TextTable::floatLabel(size_t row, size_t column) const {
  const std::string &value = text(row, column);
  double label = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), label);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() ||
      !std::isfinite(label))
    throw DataError(where(row) + ": " + columns_[column] + " '" + value +
                    "' is not a finite number");
  if (std::fabs(label) > std::numeric_limits<float>::max())
    throw DataError(where(row) + ": " + columns_[column] + " '" + value +
                    "' is beyond a float's range (3.4e38 in magnitude)");
  return float(label);
}

TextTable loadTextTable(const std::string &path) {
  size_t dot = path.rfind('.');
  std::string extension = dot == std::string::npos ? "" : lowerAscii(path.substr(dot));
  // .json is JSON Lines too, as the datasets library's json loader (run_glue.py's) reads it.
  const bool jsonLines = extension == ".jsonl" || extension == ".json";
  if (extension != ".csv" && extension != ".tsv" && !jsonLines)
    throw DataError(path + ": unknown table format; expected a .csv, .tsv or .jsonl (.json) file");
  std::string text = readWholeFile<DataError>(path, kDataFileLimit);
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) // a UTF-8 byte order mark
    text.erase(0, 3);
  if (jsonLines)
    return loadJsonl(path, text);
  return tableFromRecords(path, extension == ".csv" ? splitCsv(path, text) : splitTsv(text));
}

} // namespace bertc
