// Text datasets as tables of named columns: CSV (RFC 4180), TSV (GLUE's layout) and JSONL.
// Every row remembers the line it starts on, so that whoever reads a field (a sentence to
// tokenize, a label to check) can report a bad value as FILE:LINE, the way the JSONL
// loader does. Errors are the DataError of jsonl_data.h.
#pragma once

#include "bertc/runtime/jsonl_data.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace bertc {

/// A JSONL value that is neither a string, a number, a boolean nor an array of integers
/// (an object, or an array holding something else): kept so that reading it says what it is.
struct UnreadableField {
  std::string jsonType; ///< "object" or "array"
};

/// One field of a row. CSV and TSV fields are always text. A JSONL field is text for a
/// string (as-is), a number or a boolean (as JSON writes it: "1", "0.5", "true"), a list of
/// integers for an array of integers (pre-tokenized input_ids), absent (std::monostate)
/// where the row lacks the key or holds null, and unreadable otherwise.
using Field = std::variant<std::monostate, std::string, std::vector<int64_t>, UnreadableField>;

/// One row: its fields in the table's column order.
struct TableRow {
  int64_t line;              ///< 1-based source line the row starts on
  std::vector<Field> fields; ///< exactly one per column of the table
};

/// A loaded table. Resolve columns once with column(), then read fields by (row, column);
/// every accessor that rejects a value names FILE:LINE of its row.
class TextTable {
public:
  TextTable(std::string path, std::vector<std::string> columns, std::vector<TableRow> rows);

  const std::string &path() const { return path_; }
  /// Column names: the header of a CSV/TSV file; for JSONL, every key any row has, in order
  /// of first appearance.
  const std::vector<std::string> &columns() const { return columns_; }
  const std::vector<TableRow> &rows() const { return rows_; }
  size_t size() const { return rows_.size(); }

  /// Whether a column is named `name` (for optional columns such as token_type_ids).
  bool hasColumn(std::string_view name) const;

  /// Index of the column named `name`. Throws DataError "FILE: no column 'sentense';
  /// columns are: sentence, label (did you mean 'sentence'?)"; the suggestion appears when
  /// a column is within a few edits of `name` (case, typos, swapped letters).
  size_t column(std::string_view name) const;

  /// "FILE:LINE" of row `row`, for callers reporting their own errors about it.
  std::string where(size_t row) const;

  /// The text of a field. Throws DataError naming FILE:LINE when the field is absent, a
  /// list of integers or unreadable.
  const std::string &text(size_t row, size_t column) const;

  /// The integers of a field (JSONL arrays of integers only). Throws DataError naming
  /// FILE:LINE otherwise.
  const std::vector<int64_t> &ids(size_t row, size_t column) const;

  /// A class label: the field's text must be a decimal integer in [0, numLabels), nothing
  /// around it. Throws DataError "FILE:LINE: label 'pos' is not an integer in [0, 2)"
  /// (with the column's name in place of "label").
  int64_t intLabel(size_t row, size_t column, int64_t numLabels) const;

  /// A regression label: the field's text must be a finite decimal number ("3.8", "-1e-2")
  /// that a float holds. Throws DataError "FILE:LINE: label 'high' is not a finite number"
  /// or "FILE:LINE: label '1e300' is beyond a float's range (3.4e38 in magnitude)".
  float floatLabel(size_t row, size_t column) const;

private:
  const Field &field(size_t row, size_t column) const;

  std::string path_;
  std::vector<std::string> columns_;
  std::vector<TableRow> rows_;
};

/// Reads the table at `path`, its format chosen by the extension (case-insensitive):
///  - `.csv`: RFC 4180. The first record is the header; fields may be quoted, with "" for a
///    quote inside, and commas, CR and LF inside quotes are data; records end with LF or
///    CRLF. A quote inside an unquoted field is data; text after a closing quote is an error.
///  - `.tsv`: GLUE's layout. The first line is the header; fields are split on tabs and
///    taken literally (quotes are data, as Python's csv with QUOTE_NONE); lines end with LF
///    or CRLF.
///  - `.jsonl`: one JSON object per line (see Field for how values are kept).
/// For all three, a UTF-8 byte order mark at the start is skipped and empty lines are
/// skipped (for JSONL, whitespace-only lines too). Throws DataError naming FILE:LINE for a
/// row with the wrong number of fields, a quote never closed (the line where it opened), a
/// repeated header name, malformed JSON or a JSON row that is not an object; and naming the
/// file when it cannot be read, has an unknown extension, or holds no header or no rows.
TextTable loadTextTable(const std::string &path);

} // namespace bertc
