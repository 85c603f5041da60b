// The tokenizer's settings by precedence - the job's [data] keys, then tokenizer_config.json
// beside vocab.txt, then the guess from the vocabulary - and tokenizer_config.json's errors,
// each naming the file and, for a value of the wrong type, the key.
#include "bertc/runtime/tokenizer_config.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;
using testing::writeText;

/// An uncased vocabulary (no upper-case token), so the guess says lower-case.
Vocab uncasedVocab(const ScratchDir &dir) {
  writeText(dir.file("vocab.txt"), "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
  return Vocab::load(dir.file("vocab.txt"));
}

TEST(TokenizerConfig, WithoutAFileTheVocabularyDecides) {
  ScratchDir dir;
  TokenizerSettings settings = resolveTokenizerSettings(uncasedVocab(dir), {});
  EXPECT_TRUE(settings.lowerCase);
  EXPECT_FALSE(settings.stripAccents); // unset: follows lowerCase
  EXPECT_TRUE(settings.stripsAccents());
  EXPECT_TRUE(settings.chineseChars);
}

// bert-base-cased's tokenizer_config.json says {"do_lower_case": false}: it wins over the
// vocabulary, which looks uncased here.
TEST(TokenizerConfig, TheFileWinsOverTheGuess) {
  ScratchDir dir;
  Vocab vocab = uncasedVocab(dir);
  writeText(dir.file("tokenizer_config.json"),
            R"({"do_lower_case": false, "model_max_length": 512, "tokenizer_class": "BertTokenizer",
                "strip_accents": null, "tokenize_chinese_chars": false})");
  TokenizerSettings settings = resolveTokenizerSettings(vocab, {});
  EXPECT_FALSE(settings.lowerCase);
  EXPECT_FALSE(settings.stripsAccents()); // null: as do_lower_case
  EXPECT_FALSE(settings.chineseChars);
}

// Each [data] key set wins over the file's; one not set leaves the file's value.
TEST(TokenizerConfig, TheJobWinsOverTheFile) {
  ScratchDir dir;
  Vocab vocab = uncasedVocab(dir);
  writeText(dir.file("tokenizer_config.json"),
            R"({"do_lower_case": false, "strip_accents": true})");
  TokenizerOverrides job;
  job.lowerCase = true;
  job.chineseChars = false;
  TokenizerSettings settings = resolveTokenizerSettings(vocab, job);
  EXPECT_TRUE(settings.lowerCase);
  EXPECT_EQ(settings.stripAccents, true); // from the file
  EXPECT_FALSE(settings.chineseChars);
  job.stripAccents = false;
  EXPECT_FALSE(resolveTokenizerSettings(vocab, job).stripsAccents());
}

TEST(TokenizerConfig, ErrorsNameTheFileAndTheKey) {
  ScratchDir dir;
  Vocab vocab = uncasedVocab(dir);
  std::string path = dir.file("tokenizer_config.json");
  auto errorFor = [&](const std::string &json) {
    writeText(path, json);
    return errorOf([&] { resolveTokenizerSettings(vocab, {}); });
  };
  EXPECT_EQ(errorFor(R"({"do_lower_case": "false"})"),
            path + ": key 'do_lower_case' must be a boolean, got \"false\"");
  EXPECT_EQ(errorFor(R"({"tokenize_chinese_chars": null})"),
            path + ": key 'tokenize_chinese_chars' must be a boolean, got null");
  EXPECT_EQ(errorFor(R"({"strip_accents": 1})"),
            path + ": key 'strip_accents' must be a boolean or null, got 1");
  EXPECT_EQ(errorFor("[true]"), path + ": must be a JSON object, got array");
  EXPECT_EQ(errorFor(R"({"do_lower_case": tru})").rfind(path + ": malformed JSON: ", 0), 0u);
  // The object is level 1, so the 64th "[" is the 65th level.
  std::string prefix = "{\"added_tokens\": ";
  EXPECT_EQ(errorFor(prefix + std::string(65, '[') + std::string(65, ']') + "}"),
            path + ":1:" + std::to_string(prefix.size() + 64) + ": nesting deeper than 64 levels");
  writeText(path, "{]");
  EXPECT_THROW(resolveTokenizerSettings(vocab, {}), TokenizerError);
}

// The job's settings are not a reason to skip a broken file: it is reported all the same.
TEST(TokenizerConfig, ABrokenFileIsReportedEvenWhenTheJobSetsEverything) {
  ScratchDir dir;
  Vocab vocab = uncasedVocab(dir);
  writeText(dir.file("tokenizer_config.json"), "{");
  TokenizerOverrides job{true, true, true};
  EXPECT_THROW(resolveTokenizerSettings(vocab, job), TokenizerError);
}

} // namespace
} // namespace bertc
