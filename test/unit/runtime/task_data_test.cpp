// Task data: token-classification rows encoded through a small hand-written vocabulary
// (every expected id below is a line of kVocab) with each tag on its word's first piece,
// their truncation, one test per refusal of a tagged-words file (each naming FILE:LINE, or
// the file when it holds no rows), regression targets and their bad labels in every text
// format, and the vocabulary checks of loadDataTokenizer.
#include "bertc/runtime/task_data.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;
using Ids = std::vector<int32_t>;

/// Uncased: no token but the bracketed ones holds an upper-case letter.
const char *const kVocab = "[PAD]\n"   // 0
                           "[UNK]\n"   // 1
                           "[CLS]\n"   // 2
                           "[SEP]\n"   // 3
                           "[MASK]\n"  // 4
                           "eu\n"      // 5
                           "rejects\n" // 6
                           "german\n"  // 7
                           "call\n"    // 8
                           "to\n"      // 9
                           "boy\n"     // 10
                           "##cott\n"  // 11
                           "british\n" // 12
                           "lamb\n"    // 13
                           ".\n"       // 14
                           "##s\n";    // 15
constexpr int64_t kVocabSize = 16;

constexpr int32_t kIgnored = -100; // PyTorch's CrossEntropyLoss ignore_index

/// seq_len 16, 9 tags (CoNLL-2003's), a model vocabulary of 32, 2 token types.
constexpr DataLimits kLimits{16, 9, 32, 2};

/// The column names of Hugging Face's conll2003 data set.
TextFields conllFields() { return TextFields{"tokens", "", "ner_tags"}; }

/// A scratch directory holding vocab.txt (kVocab).
class TaskFiles {
public:
  TaskFiles() { testing::writeText(vocab(), kVocab); }

  std::string vocab() const { return dir.file("vocab.txt"); }

  /// Writes `text` to `name` and returns its path.
  std::string write(const std::string &name, const std::string &text) const {
    testing::writeText(dir.file(name), text);
    return dir.file(name);
  }

  /// Writes `text` to train.jsonl and loads it as tagged words.
  Dataset tagged(const std::string &text, const DataLimits &limits = kLimits) const {
    Tokenizer tokenizer = loadDataTokenizer(dir.file("train.jsonl"), {vocab()}, limits);
    return loadTaggedWords(write("train.jsonl", text), limits, conllFields(), tokenizer);
  }

  /// What loading `text` as tagged words throws.
  std::string taggedError(const std::string &text, const DataLimits &limits = kLimits) const {
    return errorOf([&] { tagged(text, limits); });
  }

  /// Writes `text` to `name` and loads it as regression data (one label).
  TaskData regression(const std::string &name, const std::string &text,
                      const TextFields &fields = {}) const {
    DataLimits limits = kLimits;
    limits.numLabels = 1;
    return loadTaskData(TaskKind::Regression, write(name, text), limits, {fields, {vocab()}});
  }

  std::string regressionError(const std::string &name, const std::string &text,
                              const TextFields &fields = {}) const {
    return errorOf([&] { regression(name, text, fields); });
  }

  ScratchDir dir;
};

TEST(TaskData, TagsLandOnTheFirstPieceOfEachWord) {
  TaskFiles files;
  Dataset data =
      files.tagged("{\"tokens\": [\"EU\", \"rejects\", \"German\", \"call\", \"to\", \"boycott\", "
                   "\"British\", \"lamb\", \".\"], \"ner_tags\": [3, 0, 7, 0, 0, 0, 7, 0, 0]}\n"
                   "\n"
                   "{\"tokens\": [\"zebra\", \"lamb.\", \"lambs\"], \"ner_tags\": [1, 8, 2]}\n");
  EXPECT_EQ(data.path, files.dir.file("train.jsonl"));
  EXPECT_EQ(data.labels, LabelKind::TokenClass);
  ASSERT_EQ(data.rows.size(), 2u);

  // [CLS] eu rejects german call to boy ##cott british lamb . [SEP]: "EU" lower-cased,
  // "boycott" two pieces of which only "boy" is tagged.
  EXPECT_EQ(data.rows[0].inputIds, (Ids{2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 3}));
  EXPECT_EQ(data.rows[0].tokenLabels,
            (Ids{kIgnored, 3, 0, 7, 0, 0, 0, kIgnored, 7, 0, 0, kIgnored}));
  EXPECT_EQ(data.rows[0].tokenTypeIds, Ids(12, 0));

  // [CLS] [UNK] lamb . lamb ##s [SEP]: an unknown word keeps its tag on [UNK]; the word
  // "lamb." splits at the punctuation and only its first token is tagged.
  EXPECT_EQ(data.rows[1].inputIds, (Ids{2, 1, 13, 14, 13, 15, 3}));
  EXPECT_EQ(data.rows[1].tokenLabels, (Ids{kIgnored, 1, 8, kIgnored, 2, kIgnored, kIgnored}));
  EXPECT_EQ(data.rows[1].tokenTypeIds, Ids(7, 0));
}

TEST(TaskData, TaggedRowsAreCutToSeqLen) {
  TaskFiles files;
  DataLimits limits = kLimits;
  limits.seqLen = 6; // room for 4 pieces between [CLS] and [SEP]
  Dataset data = files.tagged(
      // boy ##cott eu rejects | lamb ##s: the last word is cut whole.
      "{\"tokens\": [\"boycott\", \"EU\", \"rejects\", \"lambs\"], \"ner_tags\": [1, 2, 0, 1]}\n"
      // eu rejects german call: exactly 6 tokens, nothing cut.
      "{\"tokens\": [\"EU\", \"rejects\", \"German\", \"call\"], \"ner_tags\": [3, 0, 7, 0]}\n"
      // eu rejects german boy | ##cott: the cut falls inside a word, its tag stays.
      "{\"tokens\": [\"EU\", \"rejects\", \"German\", \"boycott\"], \"ner_tags\": [3, 0, 7, 1]}\n",
      limits);
  ASSERT_EQ(data.rows.size(), 3u);
  EXPECT_EQ(data.rows[0].inputIds, (Ids{2, 10, 11, 5, 6, 3}));
  EXPECT_EQ(data.rows[0].tokenLabels, (Ids{kIgnored, 1, kIgnored, 2, 0, kIgnored}));
  EXPECT_EQ(data.rows[0].tokenTypeIds, Ids(6, 0));
  EXPECT_EQ(data.rows[1].inputIds, (Ids{2, 5, 6, 7, 8, 3}));
  EXPECT_EQ(data.rows[1].tokenLabels, (Ids{kIgnored, 3, 0, 7, 0, kIgnored}));
  EXPECT_EQ(data.rows[2].inputIds, (Ids{2, 5, 6, 7, 10, 3}));
  EXPECT_EQ(data.rows[2].tokenLabels, (Ids{kIgnored, 3, 0, 7, 1, kIgnored}));

  // The shortest sequence: one piece between [CLS] and [SEP].
  limits.seqLen = 3;
  Dataset shortest =
      files.tagged("{\"tokens\": [\"boycott\", \"EU\"], \"ner_tags\": [4, 3]}\n", limits);
  EXPECT_EQ(shortest.rows[0].inputIds, (Ids{2, 10, 3}));
  EXPECT_EQ(shortest.rows[0].tokenLabels, (Ids{kIgnored, 4, kIgnored}));
  limits.seqLen = 2;
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\"], \"ner_tags\": [3]}\n", limits),
            files.dir.file("train.jsonl") + ": tagged words need a seq_len of at least 3 tokens");
}

TEST(TaskData, MalformedTaggedRowsNameFileAndLine) {
  TaskFiles files;
  std::string at = files.dir.file("train.jsonl") + ":";
  const std::string good = "{\"tokens\": [\"EU\"], \"ner_tags\": [3]}\n";
  // A blank line counts: the bad row is line 3.
  EXPECT_EQ(files.taggedError(good + "\n{\"tokens\": [\"EU\"], \"ner_tags\": [3]\n"),
            at + "3: malformed JSON: parse error at line 1, column 35: syntax error while "
                 "parsing object - unexpected end of input; expected '}'");
  // Bytes that are not UTF-8 inside a JSON string make the line malformed JSON.
  EXPECT_EQ(files.taggedError(good + "{\"tokens\": [\"\xff\"], \"ner_tags\": [3]}\n")
                .rfind(at + "2: malformed JSON: ", 0),
            0u);
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\"], \"ner_tags\": [1e999]}\n"),
            at + "1: column 33: number 1e999 is out of range (a double holds at most 1.8e308 "
                 "in magnitude)");
  EXPECT_EQ(files.taggedError("[\"EU\"]\n"), at + "1: a row must be a JSON object, got array");
  EXPECT_EQ(files.taggedError(good + "{\"tokens\": [\"EU\"]}\n"), at + "2: missing key 'ner_tags'");
  EXPECT_EQ(files.taggedError("{\"words\": [\"EU\"], \"ner_tags\": [3]}\n"),
            at + "1: missing key 'tokens'");
  EXPECT_EQ(files.taggedError("{\"tokens\": \"EU rejects\", \"ner_tags\": [3, 0]}\n"),
            at + "1: 'tokens' must be an array of words, got string");
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\"], \"ner_tags\": 3}\n"),
            at + "1: 'ner_tags' must be an array of integer tags, got number");
}

TEST(TaskData, BadWordsAndTagsNameTheirPlace) {
  TaskFiles files;
  std::string at = files.dir.file("train.jsonl") + ":1: ";
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\", 7], \"ner_tags\": [3, 0]}\n"),
            at + "'tokens'[1] must be a string, got 7");
  EXPECT_EQ(files.taggedError("{\"tokens\": [[\"EU\"]], \"ner_tags\": [3]}\n"),
            at + "'tokens'[0] must be a string, got [\"EU\"]");
  // Not an integer.
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\", \"call\"], \"ner_tags\": [3, 0.5]}\n"),
            at + "'ner_tags'[1] must be an integer tag in [0, 9), got 0.5");
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\"], \"ner_tags\": [\"3\"]}\n"),
            at + "'ner_tags'[0] must be an integer tag in [0, 9), got \"3\"");
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\"], \"ner_tags\": [true]}\n"),
            at + "'ner_tags'[0] must be an integer tag in [0, 9), got true");
  // Out of range: 9 tags are 0..8; an unsigned 2^64 - 1 is no tag either.
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\"], \"ner_tags\": [9]}\n"),
            at + "'ner_tags'[0] must be an integer tag in [0, 9), got 9");
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\", \"call\"], \"ner_tags\": [0, -1]}\n"),
            at + "'ner_tags'[1] must be an integer tag in [0, 9), got -1");
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\"], \"ner_tags\": [18446744073709551615]}\n"),
            at + "'ner_tags'[0] must be an integer tag in [0, 9), got 18446744073709551615");
  // Lists of different lengths.
  EXPECT_EQ(files.taggedError("{\"tokens\": [\"EU\", \"rejects\"], \"ner_tags\": [3]}\n"),
            at + "'tokens' has 2 words but 'ner_tags' has 1 tags");
  EXPECT_EQ(files.taggedError("{\"tokens\": [], \"ner_tags\": [3]}\n"),
            at + "'tokens' has 0 words but 'ner_tags' has 1 tags");
}

TEST(TaskData, ATaggedFileWithoutRowsNamesTheFile) {
  TaskFiles files;
  std::string path = files.dir.file("train.jsonl");
  EXPECT_EQ(files.taggedError(""), path + ": no rows");
  EXPECT_EQ(files.taggedError("\n  \n\t\r\n"), path + ": no rows");
  std::string absent = files.dir.file("absent.jsonl");
  Tokenizer tokenizer = loadDataTokenizer(absent, {files.vocab()}, kLimits);
  EXPECT_EQ(errorOf([&] { loadTaggedWords(absent, kLimits, conllFields(), tokenizer); }),
            absent + ": cannot open: No such file or directory");
}

TEST(TaskData, LoadTaskDataReadsTaggedWordsWithTheVocabulary) {
  TaskFiles files;
  std::string path = files.write("ner.jsonl", "{\"tokens\": [\"EU\"], \"ner_tags\": [3]}\n"
                                              "{\"tokens\": [\"lambs\"], \"ner_tags\": [0]}\n");
  TaskData task =
      loadTaskData(TaskKind::TokenClassification, path, kLimits, {conllFields(), {files.vocab()}});
  ASSERT_EQ(task.data.rows.size(), 2u);
  EXPECT_EQ(task.data.rows[1].inputIds, (Ids{2, 13, 15, 3}));
  EXPECT_EQ(task.data.rows[1].tokenLabels, (Ids{kIgnored, 0, kIgnored, kIgnored}));
  EXPECT_FALSE(task.squad);
  EXPECT_EQ(task.summary, "data: 2 rows of tagged words from " + path + ", tokenized with " +
                              files.vocab() + " (uncased)");
  // Tagged words are text: without a vocabulary the data file is named.
  EXPECT_EQ(errorOf([&] {
              loadTaskData(TaskKind::TokenClassification, path, kLimits, {conllFields()});
            }).rfind(path + ": text data needs a WordPiece vocabulary", 0),
            0u);
}

TEST(TaskData, RegressionTargetsFromEveryTextFormat) {
  TaskFiles files;
  TaskData tsv = files.regression("train.tsv", "text\tlabel\nlamb\t2.5\nboycott\t-1e-1\n");
  EXPECT_EQ(tsv.data.labels, LabelKind::Target);
  ASSERT_EQ(tsv.data.rows.size(), 2u);
  EXPECT_EQ(tsv.data.rows[0].inputIds, (Ids{2, 13, 3}));
  EXPECT_EQ(tsv.data.rows[0].target, 2.5f);
  EXPECT_EQ(tsv.data.rows[1].inputIds, (Ids{2, 10, 11, 3}));
  EXPECT_EQ(tsv.data.rows[1].target, -0.1f);

  TaskData csv = files.regression("train.csv", "text,score\nEU,4\n", {"text", "", "score"});
  EXPECT_EQ(csv.data.rows[0].target, 4.0f);

  TaskData jsonl = files.regression("train.jsonl", "{\"text\": \"lamb\", \"label\": 0.25}\n"
                                                   "{\"text\": \"EU\", \"label\": \"-3\"}\n");
  EXPECT_EQ(jsonl.data.rows[0].target, 0.25f);
  EXPECT_EQ(jsonl.data.rows[1].target, -3.0f);

  // Pre-tokenized JSONL carries its ids and a number.
  TaskData ids = files.regression("ids.jsonl", "{\"input_ids\": [2, 30, 3], \"label\": 1.5}\n");
  EXPECT_EQ(ids.data.rows[0].inputIds, (Ids{2, 30, 3}));
  EXPECT_EQ(ids.data.rows[0].target, 1.5f);
  EXPECT_EQ(ids.summary, "data: 1 row from " + files.dir.file("ids.jsonl") + " (pre-tokenized)");
  // Text rows remember the tokenizer's settings (saved with the model); ids have none.
  EXPECT_TRUE(tsv.tokenizer && tsv.tokenizer->lowerCase);
  EXPECT_FALSE(ids.tokenizer);
}

TEST(TaskData, ANonNumericRegressionLabelNamesFileAndLine) {
  TaskFiles files;
  std::string tsv = files.dir.file("train.tsv");
  EXPECT_EQ(files.regressionError("train.tsv", "text\tlabel\nlamb\t0.5\n\nboycott\thigh\n"),
            tsv + ":4: label 'high' is not a finite number");
  EXPECT_EQ(files.regressionError("train.tsv", "text\tlabel\nlamb\t1.5x\n"),
            tsv + ":2: label '1.5x' is not a finite number");
  std::string csv = files.dir.file("train.csv");
  EXPECT_EQ(
      files.regressionError("train.csv", "text,score\nEU,1\nlamb,inf\n", {"text", "", "score"}),
      csv + ":3: score 'inf' is not a finite number");
  EXPECT_EQ(files.regressionError("train.csv", "text,label\nlamb,nan\n"),
            csv + ":2: label 'nan' is not a finite number");
  std::string jsonl = files.dir.file("train.jsonl");
  EXPECT_EQ(files.regressionError("train.jsonl", "{\"text\": \"EU\", \"label\": 1}\n"
                                                 "{\"text\": \"lamb\", \"label\": \"high\"}\n"),
            jsonl + ":2: label 'high' is not a finite number");
  EXPECT_EQ(files.regressionError("train.jsonl", "{\"text\": \"lamb\", \"label\": true}\n"),
            jsonl + ":1: label 'true' is not a finite number");
  std::string ids = files.dir.file("ids.jsonl");
  EXPECT_EQ(files.regressionError("ids.jsonl", "{\"input_ids\": [2, 3], \"label\": 1}\n"
                                               "{\"input_ids\": [2, 3], \"label\": \"high\"}\n"),
            ids + ":2: 'label' must be a finite number (a regression target), got \"high\"");
  // A double beyond float's range would train on infinity (a NaN loss), so it is refused.
  EXPECT_EQ(files.regressionError("ids.jsonl", "{\"input_ids\": [2, 3], \"label\": 1e300}\n"),
            ids + ":1: 'label' 1e+300 is beyond a float's range (3.4e38 in magnitude)");
  EXPECT_EQ(files.regressionError("train.tsv", "text\tlabel\nlamb\t0.5\nEU\t-1e300\n"),
            tsv + ":3: label '-1e300' is beyond a float's range (3.4e38 in magnitude)");
  EXPECT_EQ(files.regressionError("train.jsonl", "{\"text\": \"EU\", \"label\": 1e39}\n"),
            jsonl + ":1: label '1e+39' is beyond a float's range (3.4e38 in magnitude)");
}

TEST(TaskData, DataTokenizerWithoutAVocabularySaysToPassVocab) {
  TaskFiles files;
  std::string data = files.dir.file("train.jsonl");
  EXPECT_EQ(errorOf([&] { loadDataTokenizer(data, {}, kLimits); }),
            data + ": text data needs a WordPiece vocabulary: pass the trainer --vocab FILE "
                   "(a vocab.txt), or compile the model with [model] from = a Hugging Face "
                   "folder holding vocab.txt");
}

// The rows of every task carry the model's pad id, which the batcher pads them with.
TEST(TaskData, RowsCarryTheModelsPadId) {
  TaskFiles files;
  DataLimits limits = kLimits;
  limits.padId = 5;
  TaskData rows = loadTaskData(TaskKind::Classification,
                               files.write("ids.jsonl", R"({"input_ids": [2, 7, 3], "label": 1})"
                                                        "\n"),
                               limits, {});
  EXPECT_EQ(rows.data.padId, 5);
}

// The tokenizer's [PAD] must be the model's pad id, which the batches are padded with.
TEST(TaskData, DataTokenizerRefusesAPadTokenOtherThanTheModels) {
  TaskFiles files;
  std::string vocab = files.dir.file("unk-first.txt");
  testing::writeText(vocab, "[UNK]\n[PAD]\n[CLS]\n[SEP]\n[MASK]\n");
  EXPECT_EQ(errorOf([&] { loadDataTokenizer(files.dir.file("train.jsonl"), {vocab}, kLimits); }),
            vocab + ":2: [PAD] must be the vocabulary's token 0 (line 1), the model's "
                    "pad_token_id: bertc pads batches with that id");
  DataLimits padOne = kLimits;
  padOne.padId = 1;
  EXPECT_EQ(loadDataTokenizer(files.dir.file("train.jsonl"), {vocab}, padOne).padId(), 1);
}

TEST(TaskData, DataTokenizerRefusesAVocabularyLargerThanTheModel) {
  TaskFiles files;
  std::string data = files.dir.file("train.jsonl");
  DataLimits limits = kLimits;
  limits.vocab = kVocabSize - 1;
  EXPECT_EQ(errorOf([&] { loadDataTokenizer(data, {files.vocab()}, limits); }),
            files.vocab() + ": the vocabulary has 16 tokens but the model's embedding has 15 "
                            "([model] vocab): its ids would fall outside the model");
  // Exactly the model's size is fine, and the tokenizer reads kVocab (uncased).
  limits.vocab = kVocabSize;
  Tokenizer tokenizer = loadDataTokenizer(data, {files.vocab()}, limits);
  EXPECT_TRUE(tokenizer.settings().lowerCase);
  EXPECT_EQ(tokenizer.clsId(), 2);
  EXPECT_EQ(tokenizer.sepId(), 3);
  std::vector<Token> pieces = tokenizer.tokenize("Boycott");
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].id, 10);
  EXPECT_EQ(pieces[1].id, 11);
}

// SQuAD through loadTaskData with the job's [data] settings. The context tokenizes to 10
// tokens (eu rejects german call to boy ##cott british lamb .), the question to 1 ("lamb"):
// in sequences of 10 a window holds 10 - 1 - 3 = 6 context tokens. doc_stride 2: windows
// start 0 and 4 (2 windows); doc_stride 4: 0, 2 and 4 (3 windows). A cased job turns "EU"
// into [UNK] (kVocab has only "eu").
TEST(TaskData, SquadRowsFollowTheJobsSettings) {
  TaskFiles files;
  std::string path = files.write("dev.json", R"({"data": [{"paragraphs": [{
      "context": "EU rejects German call to boycott British lamb.",
      "qas": [{"id": "l", "question": "lamb", "answers": [{"text": "lamb", "answer_start": 42}]}]
      }]}]})");
  DataLimits limits{10, 2, 32, 2};
  DataSettings settings{{}, {files.vocab()}, {}};
  settings.squad.docStride = 2;
  settings.squad.nBest = 7;
  TaskData two = loadTaskData(TaskKind::Span, path, limits, settings);
  EXPECT_EQ(two.data.rows.size(), 2u);
  EXPECT_EQ(two.data.rows[1].inputIds, (Ids{2, 13, 3, 9, 10, 11, 12, 13, 14, 3}));
  EXPECT_EQ(two.squadOptions.nBest, 7u);
  EXPECT_EQ(two.summary, "data: 1 questions from " + path +
                             " in 2 windows of up to 10 tokens (doc_stride 2), tokenized with " +
                             files.vocab() + " (uncased)");
  settings.squad.docStride = 4;
  settings.tokenizer.job.lowerCase = false;
  TaskData three = loadTaskData(TaskKind::Span, path, limits, settings);
  ASSERT_EQ(three.data.rows.size(), 3u);
  EXPECT_EQ(three.data.rows[0].inputIds, (Ids{2, 13, 3, 1, 6, 1, 8, 9, 10, 3}));
  EXPECT_NE(three.summary.find("(cased)"), std::string::npos);
  EXPECT_FALSE(three.tokenizer->lowerCase);
}

} // namespace
} // namespace bertc
