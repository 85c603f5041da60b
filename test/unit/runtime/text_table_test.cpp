// Text tables: good CSV (quotes, "" escapes, commas and line breaks in quotes, CRLF), TSV
// (GLUE's literal fields) and JSONL (text, numbers, id lists, sparse keys) with the line of
// every row; one error per kind of bad file (each naming file:line, or the file); column
// lookup with its suggestion; and the typed label accessors.
#include "bertc/runtime/text_table.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;

/// Writes `text` to `name` in `dir` and loads it.
TextTable loadText(const ScratchDir &dir, const std::string &name, const std::string &text) {
  testing::writeText(dir.file(name), text);
  return loadTextTable(dir.file(name));
}

/// Every field of every row, as text (the reader of CSV and TSV tables).
std::vector<std::vector<std::string>> allText(const TextTable &table) {
  std::vector<std::vector<std::string>> rows;
  for (size_t r = 0; r < table.size(); ++r) {
    rows.emplace_back();
    for (size_t c = 0; c < table.columns().size(); ++c)
      rows.back().push_back(table.text(r, c));
  }
  return rows;
}

std::vector<int64_t> lines(const TextTable &table) {
  std::vector<int64_t> out;
  for (const TableRow &row : table.rows())
    out.push_back(row.line);
  return out;
}

using Rows = std::vector<std::vector<std::string>>;
using Strings = std::vector<std::string>;

TEST(Csv, ReadsQuotedFieldsEscapesAndLineBreaks) {
  ScratchDir dir;
  TextTable table = loadText(dir, "train.csv",
                             "sentence,label\r\n"            // line 1
                             "\"Hello, world\",1\r\n"        // line 2
                             "\"She said \"\"hi\"\"\",0\r\n" // line 3
                             "\"two\nlines\",1\r\n"          // lines 4-5
                             "a 5\" screen,0\r\n"            // line 6: bare quote is data
                             ",1\r\n"                        // line 7: empty field
                             "\r\n"                          // line 8: skipped
                             "\"\",0\n"                      // line 9: quoted empty field
                             "\"crlf\r\ninside\",1\n"        // lines 10-11
                             "last,0");                      // line 12, no line end
  EXPECT_EQ(table.columns(), (Strings{"sentence", "label"}));
  EXPECT_EQ(allText(table), (Rows{{"Hello, world", "1"},
                                  {"She said \"hi\"", "0"},
                                  {"two\nlines", "1"},
                                  {"a 5\" screen", "0"},
                                  {"", "1"},
                                  {"", "0"},
                                  {"crlf\r\ninside", "1"},
                                  {"last", "0"}}));
  EXPECT_EQ(lines(table), (std::vector<int64_t>{2, 3, 4, 6, 7, 9, 10, 12}));
}

TEST(Csv, EmptyFieldsAtTheEndOfARecord) {
  ScratchDir dir;
  // "1," ends in an empty field whether or not a line end follows.
  TextTable table = loadText(dir, "t.csv", "a,b\n1,\n2,");
  EXPECT_EQ(allText(table), (Rows{{"1", ""}, {"2", ""}}));
}

TEST(Tsv, TakesFieldsLiterallyAsGlueDoes) {
  ScratchDir dir;
  TextTable table = loadText(dir, "train.tsv",
                             "sentence\tlabel\n"                  // line 1
                             "it 's a \"charming\" journey \t1\n" // line 2
                             "\"quoted\"\t0\r\n"                  // line 3: CRLF
                             "\n"                                 // line 4: skipped
                             "a, b\t1\n"                          // line 5
                             "\t0");                              // line 6: empty field
  EXPECT_EQ(table.columns(), (Strings{"sentence", "label"}));
  // Quotes stay, as do commas and spaces around a field; only the CR of CRLF goes.
  EXPECT_EQ(
      allText(table),
      (Rows{
          {"it 's a \"charming\" journey ", "1"}, {"\"quoted\"", "0"}, {"a, b", "1"}, {"", "0"}}));
  EXPECT_EQ(lines(table), (std::vector<int64_t>{2, 3, 5, 6}));
}

TEST(Tsv, AnUnclosedQuoteIsJustData) {
  ScratchDir dir;
  TextTable table = loadText(dir, "dev.tsv", "index\tsentence\n0\t\"open\n1\tnext\n");
  EXPECT_EQ(allText(table), (Rows{{"0", "\"open"}, {"1", "next"}}));
}

TEST(JsonlTable, KeepsTextNumbersAndIdListsWithTheirLines) {
  ScratchDir dir;
  TextTable table = loadText(
      dir, "train.jsonl",
      R"({"sentence": "good film", "label": 1, "score": 0.5})"
      "\n  \n"
      R"({"label": 0, "sentence": "bad \"film\"", "input_ids": [101, 7, 102], "flag": true})"
      "\r\n"
      R"({"sentence": "sparse", "label": null, "input_ids": []})");
  // Columns: every key, in order of first appearance.
  EXPECT_EQ(table.columns(), (Strings{"sentence", "label", "score", "input_ids", "flag"}));
  EXPECT_EQ(lines(table), (std::vector<int64_t>{1, 3, 4}));
  size_t sentence = table.column("sentence"), label = table.column("label"),
         score = table.column("score"), ids = table.column("input_ids");
  EXPECT_EQ(table.text(0, sentence), "good film");
  EXPECT_EQ(table.text(1, sentence), "bad \"film\"");
  EXPECT_EQ(table.text(0, label), "1"); // numbers as JSON writes them
  EXPECT_EQ(table.text(0, score), "0.5");
  EXPECT_EQ(table.text(1, table.column("flag")), "true");
  EXPECT_EQ(table.ids(1, ids), (std::vector<int64_t>{101, 7, 102}));
  EXPECT_EQ(table.ids(2, ids), (std::vector<int64_t>{}));
  // Keys a row lacks, and nulls, are absent; every row still has a field per column.
  for (const TableRow &row : table.rows())
    EXPECT_EQ(row.fields.size(), 5u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(table.rows()[1].fields[score]));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(table.rows()[2].fields[label]));
}

TEST(JsonlTable, ReadingAFieldAsTheWrongKindNamesItsLine) {
  ScratchDir dir;
  TextTable table = loadText(
      dir, "rows.jsonl",
      R"({"text": "hi", "input_ids": [1, 2], "meta": {"a": 1}, "tags": ["x"], "big": [1.5]})"
      "\n"
      R"({"text": "only text"})");
  std::string at = table.path();
  size_t text = table.column("text"), ids = table.column("input_ids");
  EXPECT_EQ(errorOf([&] { table.text(0, ids); }),
            at + ":1: 'input_ids' is a list of integers, not text");
  EXPECT_EQ(errorOf([&] { table.ids(0, text); }),
            at + ":1: 'text' is text, not a list of integers");
  EXPECT_EQ(errorOf([&] { table.text(0, table.column("meta")); }),
            at + ":1: 'meta' is a JSON object, not text");
  EXPECT_EQ(errorOf([&] { table.text(0, table.column("tags")); }),
            at + ":1: 'tags' is a JSON array that is not all integers, not text");
  EXPECT_EQ(errorOf([&] { table.ids(0, table.column("big")); }),
            at + ":1: 'big' is a JSON array that is not all integers, not a list of integers");
  EXPECT_EQ(errorOf([&] { table.ids(1, ids); }), at + ":2: the row has no 'input_ids'");
}

/// A file that must be refused: its name, content, and what the error says after the path.
struct BadTable {
  std::string name;
  std::string content;
  std::string message;
};

class BadTextTable : public ::testing::TestWithParam<BadTable> {};

TEST_P(BadTextTable, ErrorNamesFileAndLine) {
  ScratchDir dir;
  std::string path = dir.file(GetParam().name);
  testing::writeText(path, GetParam().content);
  std::string error = errorOf([&] { loadTextTable(path); });
  EXPECT_EQ(error.rfind(path + GetParam().message, 0), 0u) << error;
}

INSTANTIATE_TEST_SUITE_P(
    TextTable, BadTextTable,
    ::testing::Values(
        BadTable{"a.csv", "a,b\n1,2\n1,2,3\n", ":3: 3 fields, but the header has 2 columns"},
        BadTable{"b.csv", "a,b\n1,2\nonly\n", ":3: 1 field, but the header has 2 columns"},
        // The quote opened on line 3 runs to the end of the file.
        BadTable{"c.csv", "a,b\n1,2\n\"open,\n2\nmore\n", ":3: quoted field is never closed"},
        BadTable{"d.csv", "a,b\n1,\"x\"y\n", ":2: text after the closing quote of a field"},
        BadTable{"e.csv", "", ": empty file: no header row"},
        BadTable{"f.csv", "\xEF\xBB\xBF\r\n\r\n", ": empty file: no header row"},
        BadTable{"g.csv", "a,b\r\n", ": no rows after the header"},
        BadTable{"h.csv", "a,b,a\n1,2,3\n", ":1: column 'a' appears twice in the header"},
        BadTable{"a.tsv", "a\tb\n1\t2\n\n1\n", ":4: 1 field, but the header has 2 columns"},
        BadTable{"b.tsv", "a\tb\n1\t2\t\n", ":2: 3 fields, but the header has 2 columns"},
        BadTable{"c.tsv", "\n\n", ": empty file: no header row"},
        BadTable{"d.tsv", "a\tb\n", ": no rows after the header"},
        BadTable{"a.jsonl", "{\"a\": 1}\n{\"a\": 1\n", ":2: malformed JSON: "},
        BadTable{"f.jsonl", "{\"a\": " + std::string(100000, '[') + "]}\n",
                 ":1: column 70: nesting deeper than 64 levels"},
        BadTable{"g.jsonl", "{\"a\": 1}\n{\"a\": -1e400}\n",
                 ":2: column 7: number -1e400 is out of range"},
        BadTable{"b.jsonl", "\n[1, 2]\n", ":2: a row must be a JSON object, got array"},
        BadTable{"c.jsonl", "{\"a\": 1}\n\"text\"\n",
                 ":2: a row must be a JSON object, got string"},
        BadTable{"d.jsonl", "\n  \r\n", ": no rows"},
        BadTable{"e.txt", "a,b\n1,2\n",
                 ": unknown table format; expected a .csv, .tsv or .jsonl"}));

TEST(TextTable, MissingAndUnreadableFilesNameTheFile) {
  ScratchDir dir;
  std::string missing = dir.file("absent.csv");
  std::string error = errorOf([&] { loadTextTable(missing); });
  EXPECT_EQ(error.rfind(missing + ": cannot open", 0), 0u) << error;
  std::string directory = dir.file("folder.tsv");
  std::filesystem::create_directory(directory);
  EXPECT_EQ(errorOf([&] { loadTextTable(directory); }),
            directory + ": is a directory, not a regular file");
}

TEST(TextTable, SkipsAByteOrderMarkInEveryFormat) {
  ScratchDir dir;
  const std::string bom = "\xEF\xBB\xBF";
  EXPECT_EQ(loadText(dir, "t.csv", bom + "text,label\nx,1\n").columns(),
            (Strings{"text", "label"}));
  EXPECT_EQ(loadText(dir, "t.tsv", bom + "text\tlabel\nx\t1\n").columns(),
            (Strings{"text", "label"}));
  EXPECT_EQ(loadText(dir, "t.jsonl", bom + "{\"text\": \"x\"}\n").columns(), (Strings{"text"}));
}

TEST(TextTable, ExtensionIsCaseInsensitive) {
  ScratchDir dir;
  EXPECT_EQ(loadText(dir, "T.CSV", "a\n\"x,y\"\n").text(0, 0), "x,y");
}

TEST(TextTable, MissingColumnListsColumnsAndSuggestsTheClosest) {
  ScratchDir dir;
  TextTable table = loadText(dir, "train.tsv", "sentence\tlabel\nfine\t1\n");
  std::string path = table.path();
  EXPECT_EQ(table.column("label"), 1u);
  EXPECT_TRUE(table.hasColumn("sentence"));
  EXPECT_FALSE(table.hasColumn("Sentence"));
  // One substitution (c -> s).
  EXPECT_EQ(errorOf([&] { table.column("sentense"); }),
            path + ": no column 'sentense'; columns are: sentence, label "
                   "(did you mean 'sentence'?)");
  // Swapped neighbours and case count as one edit and none.
  EXPECT_EQ(errorOf([&] { table.column("lable"); }),
            path + ": no column 'lable'; columns are: sentence, label (did you mean 'label'?)");
  EXPECT_EQ(errorOf([&] { table.column("LABEL"); }),
            path + ": no column 'LABEL'; columns are: sentence, label (did you mean 'label'?)");
  // No column within 1 edit (3 characters / 3) of "idx": no suggestion.
  EXPECT_EQ(errorOf([&] { table.column("idx"); }),
            path + ": no column 'idx'; columns are: sentence, label");
}

TEST(TextTable, IntegerLabelsMustBeInRange) {
  ScratchDir dir;
  TextTable table = loadText(dir, "train.tsv",
                             "sentence\tlabel\n"
                             "a\t0\nb\t1\nc\tpos\nd\t2\ne\t-1\nf\t1.0\ng\t 1\nh\t\n"
                             "i\t99999999999999999999\n");
  std::string path = table.path();
  size_t label = table.column("label");
  EXPECT_EQ(table.intLabel(0, label, 2), 0);
  EXPECT_EQ(table.intLabel(1, label, 2), 1);
  EXPECT_EQ(table.where(2), path + ":4");
  EXPECT_EQ(errorOf([&] { table.intLabel(2, label, 2); }),
            path + ":4: label 'pos' is not an integer in [0, 2)");
  EXPECT_EQ(errorOf([&] { table.intLabel(3, label, 2); }),
            path + ":5: label '2' is not an integer in [0, 2)");
  EXPECT_EQ(table.intLabel(3, label, 3), 2);
  EXPECT_EQ(errorOf([&] { table.intLabel(4, label, 2); }),
            path + ":6: label '-1' is not an integer in [0, 2)");
  EXPECT_EQ(errorOf([&] { table.intLabel(5, label, 2); }),
            path + ":7: label '1.0' is not an integer in [0, 2)");
  EXPECT_EQ(errorOf([&] { table.intLabel(6, label, 2); }),
            path + ":8: label ' 1' is not an integer in [0, 2)");
  EXPECT_EQ(errorOf([&] { table.intLabel(7, label, 2); }),
            path + ":9: label '' is not an integer in [0, 2)");
  EXPECT_EQ(errorOf([&] { table.intLabel(8, label, 2); }),
            path + ":10: label '99999999999999999999' is not an integer in [0, 2)");
}

TEST(TextTable, LabelsFromJsonNumbersAndTheColumnNameInErrors) {
  ScratchDir dir;
  TextTable table = loadText(dir, "dev.jsonl",
                             R"({"gold": 1, "score": 3.75})"
                             "\n"
                             R"({"gold": 1.0, "score": "4"})");
  size_t gold = table.column("gold"), score = table.column("score");
  EXPECT_EQ(table.intLabel(0, gold, 2), 1);
  EXPECT_EQ(errorOf([&] { table.intLabel(1, gold, 2); }),
            table.path() + ":2: gold '1.0' is not an integer in [0, 2)");
  EXPECT_FLOAT_EQ(table.floatLabel(0, score), 3.75);
  EXPECT_FLOAT_EQ(table.floatLabel(1, score), 4.0);
  EXPECT_FLOAT_EQ(table.floatLabel(1, gold), 1.0);
}

TEST(TextTable, FloatLabelsMustBeFiniteNumbers) {
  ScratchDir dir;
  TextTable table = loadText(dir, "sts.csv",
                             "s1,s2,score\n"
                             "a,b,3.8\na,b,-1e-2\na,b,5\na,b,high\na,b,nan\na,b,inf\n"
                             "a,b,\na,b,1e999\na,b,2.5x\n");
  std::string path = table.path();
  size_t score = table.column("score");
  EXPECT_FLOAT_EQ(table.floatLabel(0, score), 3.8);
  EXPECT_FLOAT_EQ(table.floatLabel(1, score), -0.01);
  EXPECT_FLOAT_EQ(table.floatLabel(2, score), 5.0);
  const char *rejected[] = {"high", "nan", "inf", "", "1e999", "2.5x"};
  for (size_t i = 0; i < std::size(rejected); ++i)
    EXPECT_EQ(errorOf([&] { table.floatLabel(3 + i, score); }), path + ":" + std::to_string(5 + i) +
                                                                    ": score '" + rejected[i] +
                                                                    "' is not a finite number");
}

} // namespace
} // namespace bertc
