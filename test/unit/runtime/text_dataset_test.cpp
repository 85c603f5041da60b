// Training data from text: TSV, CSV and JSONL rows encoded through a small hand-written
// vocabulary (every expected id below is a line of kVocab), sentence pairs with their token
// types, truncation and its count, pre-tokenized JSONL left to its own loader, and one
// test per refusal (bad label at file:line, missing column, no vocabulary, a vocabulary
// larger than the model, bad UTF-8, pairs without a second token type).
#include "bertc/runtime/text_dataset.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;
using Ids = std::vector<int32_t>;

/// Uncased: no token but the bracketed ones holds an upper-case letter.
const char *const kVocab = "[PAD]\n"    // 0
                           "[UNK]\n"    // 1
                           "[CLS]\n"    // 2
                           "[SEP]\n"    // 3
                           "[MASK]\n"   // 4
                           "the\n"      // 5
                           "movie\n"    // 6
                           "was\n"      // 7
                           "good\n"     // 8
                           "bad\n"      // 9
                           "un\n"       // 10
                           "##believ\n" // 11
                           "##able\n"   // 12
                           "!\n"        // 13
                           "a\n"        // 14
                           "plot\n"     // 15
                           "is\n"       // 16
                           "fun\n"      // 17
                           ",\n";       // 18
constexpr int64_t kVocabSize = 19;

/// seq_len 16, 2 labels, a model vocabulary of 32, 2 token types.
constexpr DataLimits kLimits{16, 2, 32, 2};

/// A scratch directory holding vocab.txt (kVocab).
class TextData {
public:
  TextData() { testing::writeText(vocab(), kVocab); }

  std::string vocab() const { return dir.file("vocab.txt"); }

  /// Writes `text` to `name` and loads it as training data.
  TrainingData load(const std::string &name, const std::string &text, const TextFields &fields = {},
                    const DataLimits &limits = kLimits) const {
    testing::writeText(dir.file(name), text);
    return loadTrainingData(dir.file(name), limits, fields, {vocab(), job});
  }

  /// What loading `text` as `name` throws.
  std::string error(const std::string &name, const std::string &text, const TextFields &fields = {},
                    const DataLimits &limits = kLimits) const {
    return errorOf([&] { load(name, text, fields, limits); });
  }

  ScratchDir dir;
  TokenizerOverrides job; ///< the [data] tokenizer settings
};

TextFields sentenceFields() { return TextFields{"sentence", "", "label"}; }

TEST(TextDataset, EncodesTsvRowsWithTheVocabulary) {
  TextData files;
  TrainingData loaded = files.load("train.tsv",
                                   "sentence\tlabel\n"
                                   "The movie was GOOD!\t1\n"
                                   "a bad, unbelievable plot\t0\n"
                                   "the zebra\t1\n",
                                   sentenceFields());
  const std::vector<Example> &rows = loaded.data.rows;
  ASSERT_EQ(rows.size(), 3u);
  // [CLS] the movie was good ! [SEP]: upper case folded, "!" split off.
  EXPECT_EQ(rows[0].inputIds, (Ids{2, 5, 6, 7, 8, 13, 3}));
  EXPECT_EQ(rows[0].tokenTypeIds, Ids(7, 0));
  EXPECT_EQ(rows[0].label, 1);
  // [CLS] a bad , un ##believ ##able plot [SEP]
  EXPECT_EQ(rows[1].inputIds, (Ids{2, 14, 9, 18, 10, 11, 12, 15, 3}));
  EXPECT_EQ(rows[1].label, 0);
  // "zebra" is no word of the vocabulary: [UNK].
  EXPECT_EQ(rows[2].inputIds, (Ids{2, 5, 1, 3}));
  ASSERT_TRUE(loaded.tokenization);
  EXPECT_EQ(loaded.tokenization->vocabPath, files.vocab());
  EXPECT_TRUE(loaded.tokenization->settings.lowerCase);
  EXPECT_EQ(loaded.tokenization->truncatedRows, 0);
  EXPECT_EQ(loaded.summary(), "data: 3 rows from " + files.dir.file("train.tsv") +
                                  ", tokenized with " + files.vocab() +
                                  " (uncased), 0 rows truncated to 16 tokens");
}

TEST(TextDataset, EncodesCsvSentencePairsWithTokenTypes) {
  TextData files;
  TrainingData loaded = files.load("pairs.CSV",
                                   "sentence1,sentence2,label\r\n"
                                   "the plot,\"is fun, a good movie\",1\r\n"
                                   "bad,was bad,0\r\n",
                                   TextFields{"sentence1", "sentence2", "label"});
  const std::vector<Example> &rows = loaded.data.rows;
  ASSERT_EQ(rows.size(), 2u);
  // [CLS] the plot [SEP] is fun , a good movie [SEP]
  EXPECT_EQ(rows[0].inputIds, (Ids{2, 5, 15, 3, 16, 17, 18, 14, 8, 6, 3}));
  EXPECT_EQ(rows[0].tokenTypeIds, (Ids{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1}));
  // [CLS] bad [SEP] was bad [SEP]
  EXPECT_EQ(rows[1].inputIds, (Ids{2, 9, 3, 7, 9, 3}));
  EXPECT_EQ(rows[1].tokenTypeIds, (Ids{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(rows[1].label, 0);
}

TEST(TextDataset, ReadsTextJsonlAndLeavesPreTokenizedJsonlToItsLoader) {
  TextData files;
  TrainingData text = files.load("train.jsonl", "\n"
                                                "{\"text\": \"good fun\", \"label\": 1}\n"
                                                "{\"text\": \"bad\", \"label\": \"0\"}\n");
  ASSERT_EQ(text.data.rows.size(), 2u);
  EXPECT_EQ(text.data.rows[0].inputIds, (Ids{2, 8, 17, 3}));
  EXPECT_EQ(text.data.rows[1].inputIds, (Ids{2, 9, 3}));
  EXPECT_EQ(text.data.rows[1].label, 0);
  EXPECT_TRUE(text.tokenization);

  TrainingData ids = files.load("ids.jsonl", "{\"input_ids\": [2, 30, 3], \"label\": 1}\n");
  ASSERT_EQ(ids.data.rows.size(), 1u);
  EXPECT_EQ(ids.data.rows[0].inputIds, (Ids{2, 30, 3}));
  EXPECT_FALSE(ids.tokenization);
  EXPECT_EQ(ids.summary(), "data: 1 row from " + files.dir.file("ids.jsonl") + " (pre-tokenized)");
  // Pre-tokenized data needs no vocabulary.
  EXPECT_EQ(loadTrainingData(files.dir.file("ids.jsonl"), kLimits, {}, {}).data.rows.size(), 1u);
}

// run_glue.py's .json files are JSON Lines (the datasets library's json loader reads them so).
TEST(TextDataset, ReadsJsonFilesAsJsonLines) {
  TextData files;
  TrainingData text = files.load("train.json", "{\"text\": \"good fun\", \"label\": 1}\n");
  ASSERT_EQ(text.data.rows.size(), 1u);
  EXPECT_EQ(text.data.rows[0].inputIds, (Ids{2, 8, 17, 3}));
  EXPECT_TRUE(text.tokenization);
  TrainingData ids = files.load("ids.json", "{\"input_ids\": [2, 30, 3], \"label\": 1}\n");
  EXPECT_EQ(ids.data.rows[0].inputIds, (Ids{2, 30, 3}));
  EXPECT_FALSE(ids.tokenization);
}

TEST(TextDataset, TruncatesToSeqLenAndCountsTheRowsCut) {
  TextData files;
  DataLimits limits = kLimits;
  limits.seqLen = 6;
  TrainingData single = files.load("single.tsv",
                                   "text\tlabel\n"
                                   "the movie was good !\t1\n" // 7 tokens
                                   "the movie was good\t1\n"   // exactly 6
                                   "good\t0\n",
                                   {}, limits);
  EXPECT_EQ(single.data.rows[0].inputIds, (Ids{2, 5, 6, 7, 8, 3}));
  EXPECT_EQ(single.data.rows[1].inputIds, (Ids{2, 5, 6, 7, 8, 3}));
  EXPECT_EQ(single.tokenization->truncatedRows, 1);
  EXPECT_EQ(single.summary().substr(single.summary().find(", 1 row")),
            ", 1 row truncated to 6 tokens");

  // Longest first: 4 + 1 tokens need 8, so the longer first text loses two.
  TrainingData pair = files.load("pair.tsv",
                                 "a\tb\tlabel\n"
                                 "the movie was good\tbad\t1\n",
                                 TextFields{"a", "b", "label"}, limits);
  EXPECT_EQ(pair.data.rows[0].inputIds, (Ids{2, 5, 6, 3, 9, 3}));
  EXPECT_EQ(pair.data.rows[0].tokenTypeIds, (Ids{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(pair.tokenization->truncatedRows, 1);
}

TEST(TextDataset, KeepsCaseWithACasedVocabulary) {
  TextData files;
  testing::writeText(files.vocab(), std::string(kVocab) + "Good\n"); // 19
  TrainingData loaded = files.load("train.tsv", "text\tlabel\nGood good\t1\n");
  EXPECT_EQ(loaded.data.rows[0].inputIds, (Ids{2, 19, 8, 3}));
  EXPECT_FALSE(loaded.tokenization->settings.lowerCase);
  EXPECT_NE(loaded.summary().find(" (cased), "), std::string::npos);
}

// tokenizer_config.json beside the (uncased-looking) vocabulary says cased: "Good" is then
// not "good" and, absent from kVocab, is [UNK] (1). The job's do_lower_case wins over it.
TEST(TextDataset, TokenizerConfigAndTheJobDecideTheCase) {
  TextData files;
  testing::writeText(files.dir.file("tokenizer_config.json"), R"({"do_lower_case": false})");
  TrainingData cased = files.load("train.tsv", "text\tlabel\nGood good\t1\n");
  EXPECT_EQ(cased.data.rows[0].inputIds, (Ids{2, 1, 8, 3}));
  EXPECT_NE(cased.summary().find(" (cased), "), std::string::npos);
  files.job.lowerCase = true;
  TrainingData uncased = files.load("train.tsv", "text\tlabel\nGood good\t1\n");
  EXPECT_EQ(uncased.data.rows[0].inputIds, (Ids{2, 8, 8, 3}));
  EXPECT_NE(uncased.summary().find(" (uncased), "), std::string::npos);
}

TEST(TextDataset, BadLabelsNameFileAndLine) {
  TextData files;
  std::string tsv = files.dir.file("train.tsv");
  EXPECT_EQ(files.error("train.tsv", "text\tlabel\ngood\t1\n\nbad\tpos\n"),
            tsv + ":4: label 'pos' is not an integer in [0, 2)");
  EXPECT_EQ(files.error("train.tsv", "text\tstars\ngood\t2\n", TextFields{"text", "", "stars"}),
            tsv + ":2: stars '2' is not an integer in [0, 2)");
  std::string jsonl = files.dir.file("train.jsonl");
  EXPECT_EQ(files.error("train.jsonl", "{\"text\": \"good\", \"label\": 1}\n{\"text\": \"bad\"}\n"),
            jsonl + ":2: the row has no 'label'");
}

TEST(TextDataset, AMissingColumnNamesTheColumnsThereAre) {
  TextData files;
  EXPECT_EQ(
      files.error("train.tsv", "sentence\tlabel\ngood\t1\n", TextFields{"sentense", "", "label"}),
      files.dir.file("train.tsv") +
          ": no column 'sentense'; columns are: sentence, label (did you mean "
          "'sentence'?)");
  EXPECT_EQ(
      files.error("train.csv", "text,label\ngood,1\n", TextFields{"text", "hypothesis", "label"}),
      files.dir.file("train.csv") + ": no column 'hypothesis'; columns are: text, label");
}

TEST(TextDataset, TextWithoutAVocabularySaysHowToGiveOne) {
  TextData files;
  std::string tsv = files.dir.file("train.tsv");
  testing::writeText(tsv, "text\tlabel\ngood\t1\n");
  EXPECT_EQ(errorOf([&] { loadTrainingData(tsv, kLimits, {}, {}); }),
            tsv + ": text data needs a WordPiece vocabulary: pass the trainer --vocab FILE "
                  "(a vocab.txt), or compile the model with [model] from = a Hugging Face "
                  "folder holding vocab.txt");
  std::string absent = files.dir.file("absent.txt");
  EXPECT_EQ(errorOf([&] {
              loadTrainingData(tsv, kLimits, {}, {absent});
            }).rfind(absent + ": cannot open: ", 0),
            0u);
  // A file without rows says so first: no vocabulary would make it trainable.
  std::string empty = files.dir.file("empty.jsonl");
  testing::writeText(empty, "\n");
  EXPECT_EQ(errorOf([&] { loadTrainingData(empty, kLimits, {}, {}); }), empty + ": no rows");
}

TEST(TextDataset, AVocabularyLargerThanTheModelIsRefused) {
  TextData files;
  DataLimits limits = kLimits;
  limits.vocab = 16;
  EXPECT_EQ(files.error("train.tsv", "text\tlabel\ngood\t1\n", {}, limits),
            files.vocab() + ": the vocabulary has " + std::to_string(kVocabSize) +
                " tokens but the model's embedding has 16 ([model] vocab): its ids would "
                "fall outside the model");
  limits.vocab = kVocabSize; // exactly the model's size is fine
  EXPECT_EQ(files.load("train.tsv", "text\tlabel\ngood\t1\n", {}, limits).data.rows.size(), 1u);
}

TEST(TextDataset, InvalidUtf8NamesTheLineAndTheColumn) {
  TextData files;
  EXPECT_EQ(files.error("train.tsv", "a\tb\tlabel\ngood\tbad\t1\nfun\tbad \xff\t0\n",
                        TextFields{"a", "b", "label"}),
            files.dir.file("train.tsv") + ":3: 'b': invalid UTF-8 at byte 4 of the text");
}

TEST(TextDataset, PairsNeedTwoTokenTypes) {
  TextData files;
  DataLimits limits = kLimits;
  limits.typeVocab = 1;
  EXPECT_EQ(files.error("train.tsv", "a\tb\tlabel\ngood\tbad\t1\n", TextFields{"a", "b", "label"},
                        limits),
            files.dir.file("train.tsv") +
                ": sentence pairs ('a', 'b') need 2 token types but the model has 1 "
                "([model] type_vocab)");
}

} // namespace
} // namespace bertc
