// The tokenizer.json BPE tokenizers on small files whose ids are derived by hand: merges by
// rank with a tie, byte fallback and the unknown token, added and special tokens, the
// template's BOS/EOS, ignore_merges, the byte-level alphabet, and errors naming the field.
#include "bertc/runtime/tokenizer_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bertc {
namespace {

using Json = nlohmann::json;

/// A SentencePiece-style tokenizer.json (Llama-2's normalizer and decoder) over `model`.
Json sentencePieceFile(Json model) {
  return {{"normalizer", Json::parse(R"({"type": "Sequence", "normalizers": [
               {"type": "Prepend", "prepend": "▁"},
               {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})")},
          {"pre_tokenizer", nullptr},
          {"decoder", Json::parse(R"({"type": "Sequence", "decoders": [
               {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
               {"type": "ByteFallback"}, {"type": "Fuse"},
               {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})")},
          {"model", std::move(model)}};
}

HfTokenizer parse(const Json &file) { return parseHfTokenizer(file.dump(), "tokenizer.json"); }

std::vector<int32_t> ids(const std::vector<Token> &tokens) {
  std::vector<int32_t> out;
  for (const Token &token : tokens)
    out.push_back(token.id);
  return out;
}

// "▁aaa": merges "▁ a" (rank 0) then "a a" (rank 1): ▁a a a, then the tie of "a a" at two
// places goes to the leftmost: ▁a aa.
TEST(HfTokenizerTest, MergesByRankLeftmostOnTie) {
  Json model = {{"type", "BPE"},
                {"vocab", {{"<unk>", 0}, {"▁", 1}, {"a", 2}, {"▁a", 3}, {"aa", 4}}},
                {"merges", {"▁ a", "a a"}},
                {"unk_token", "<unk>"}};
  HfTokenizer tokenizer = parse(sentencePieceFile(model));
  std::vector<Token> tokens = tokenizer.encode("aaa", false);
  EXPECT_EQ(ids(tokens), (std::vector<int32_t>{3, 4}));
  // "▁a" spans the prepended "▁" (the first character's span) and "a": bytes [0, 1).
  EXPECT_EQ(tokens[0].begin, 0u);
  EXPECT_EQ(tokens[0].end, 1u);
  EXPECT_EQ(tokens[1].begin, 1u);
  EXPECT_EQ(tokens[1].end, 3u);
  EXPECT_EQ(tokenizer.decode(ids(tokens), false), "aaa");
}

// "é" (C3 A9) is not in the vocabulary: its bytes' tokens <0xC3> <0xA9>. "ж" (D0 B6) has no
// <0xD0>: the unknown token; two such characters in a row are one with fuse_unk.
TEST(HfTokenizerTest, ByteFallbackThenUnknown) {
  Json model = {{"type", "BPE"},
                {"vocab", {{"<unk>", 0}, {"▁", 1}, {"<0xC3>", 2}, {"<0xA9>", 3}, {"<0xB6>", 4}}},
                {"merges", Json::array()},
                {"unk_token", "<unk>"},
                {"byte_fallback", true},
                {"fuse_unk", true}};
  HfTokenizer tokenizer = parse(sentencePieceFile(model));
  EXPECT_EQ(ids(tokenizer.encode("é", false)), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(ids(tokenizer.encode("жж", false)), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(tokenizer.decode({1, 2, 3}, false), "é");
  // A lone continuation byte decodes to U+FFFD, one per byte token.
  EXPECT_EQ(tokenizer.decode({3, 4}, false), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

// Added tokens are split out of the raw text first, the longest at the leftmost place;
// the template adds <s> before the text only when asked; decode can skip special tokens.
TEST(HfTokenizerTest, AddedTokensFirstAndTemplate) {
  Json model = {{"type", "BPE"},
                {"vocab", {{"<unk>", 0}, {"▁", 1}, {"a", 2}, {"▁a", 3}}},
                {"merges", {"▁ a"}},
                {"unk_token", "<unk>"}};
  Json file = sentencePieceFile(model);
  auto added = [](int32_t id, const char *content, bool special) {
    return Json{{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
                {"rstrip", false}, {"normalized", false}, {"special", special}};
  };
  file["added_tokens"] = {added(5, "<s>", true), added(6, "<s>x", false)};
  file["post_processor"] = Json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A"}}],
      "special_tokens": {"<s>": {"id": "<s>", "ids": [5], "tokens": ["<s>"]}}})");
  HfTokenizer tokenizer = parse(file);
  // a | <s>x | a | <s> | a: each piece between added tokens gets its own "▁".
  std::vector<Token> tokens = tokenizer.encode("a<s>xa<s>a", false);
  EXPECT_EQ(ids(tokens), (std::vector<int32_t>{3, 6, 3, 5, 3}));
  EXPECT_EQ(tokens[1].begin, 1u);
  EXPECT_EQ(tokens[1].end, 5u);
  EXPECT_EQ(ids(tokenizer.encode("a", true)), (std::vector<int32_t>{5, 3}));
  EXPECT_EQ(tokenizer.decode({5, 3}, true), "a");
}

// Byte-level BPE with ignore_merges: a word in the vocabulary is one token even where the
// merges would not build it; "é" is the byte-level "Ã©".
TEST(HfTokenizerTest, ByteLevelIgnoreMerges) {
  Json file = {
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model",
       {{"type", "BPE"},
        {"vocab", {{"a", 0}, {"b", 1}, {"Ġ", 2}, {"Ã", 3}, {"©", 4}, {"Ġab", 5}, {"Ã©", 6}}},
        {"merges", {"Ã ©"}},
        {"ignore_merges", true}}}};
  HfTokenizer tokenizer = parse(file);
  // GPT-2's pattern: "a", " ab", " é" -> a, Ġab (whole word), Ġ Ã© (merged).
  std::vector<Token> tokens = tokenizer.encode("a ab é", false);
  EXPECT_EQ(ids(tokens), (std::vector<int32_t>{0, 5, 2, 6}));
  EXPECT_EQ(tokens[3].begin, 5u);
  EXPECT_EQ(tokens[3].end, 7u);
  EXPECT_EQ(tokenizer.decode(ids(tokens), false), "a ab é");
}

TEST(HfTokenizerTest, UnsupportedFieldsAreNamed) {
  auto errorOf = [](const Json &file) {
    try {
      (void)parse(file);
    } catch (const TokenizerError &error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  Json bpe = {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", Json::array()}};
  EXPECT_EQ(errorOf({{"model", {{"type", "Unigram"}}}}),
            "tokenizer.json: model.type: \"Unigram\" is not supported (BPE is)");
  EXPECT_EQ(errorOf({{"model", bpe}, {"normalizer", {{"type", "NFKC"}}}}).substr(0, 39),
            "tokenizer.json: normalizer: {\"type\":\"NF");
  Json split = Json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "use_regex": false}]})");
  EXPECT_EQ(errorOf({{"model", bpe}, {"pre_tokenizer", split}}),
            "tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex: \"\\\\w+\" is not "
            "supported (bertc knows the patterns of GPT-2, Llama-3 and Qwen2)");
  Json badMerge = bpe;
  badMerge["merges"] = {"a b"};
  EXPECT_EQ(errorOf({{"model", badMerge}}),
            "tokenizer.json: model.merges[0]: \"b\" is not in model.vocab");
  EXPECT_EQ(errorOf({{"model", bpe}, {"truncation", {{"max_length", 8}}}}),
            "tokenizer.json: truncation: {\"max_length\":8} is not supported (bertc supports "
            "null)");
}

} // namespace
} // namespace bertc
