// A causal LM's rows: next-token labels shifted from the ids or from the row's own labels
// (-100 kept), truncation at seq_len, text through a small hand-made tokenizer.json whose
// ids are derived by hand, the target-token count that normalizes the loss, packing (and
// what the batcher writes of a packed row), and one test per refusal, each naming FILE:LINE
// (or the file when it holds no rows); conversations (`messages` rows) labelled on the
// assistant's tokens, cut at seq_len, and refused row by row.
#include "bertc/runtime/causal_lm_data.h"
#include "bertc/runtime/task_data.h"
#include "bertc/runtime/tokenizer_json.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;
using Ids = std::vector<int32_t>;

constexpr int32_t kIgnored = -100;
/// seq_len 6, no classes, a vocabulary of 50.
constexpr DataLimits kLimits{6, 0, 50, 1};

class CausalLmFiles {
public:
  std::string write(const std::string &name, const std::string &text) const {
    testing::writeText(dir.file(name), text);
    return dir.file(name);
  }
  CausalLmData load(const std::string &rows, const HfTokenizer *tokenizer = nullptr) const {
    return loadCausalLmData(write("train.jsonl", rows), kLimits, {"text", tokenizer, 7});
  }
  std::string refusal(const std::string &rows) const {
    return errorOf([&] { load(rows); });
  }
  std::string path() const { return dir.file("train.jsonl"); }

private:
  ScratchDir dir;
};

TEST(CausalLmData, IdsAreTheirOwnLabelsShiftedToTheNextToken) {
  CausalLmFiles files;
  CausalLmData rows = files.load("{\"input_ids\": [7, 8, 9, 10]}\n\n{\"input_ids\": [3]}\n");
  ASSERT_EQ(rows.data.rows.size(), 2u);
  EXPECT_EQ(rows.data.labels, LabelKind::TokenClass);
  EXPECT_EQ(rows.data.rows[0].inputIds, (Ids{7, 8, 9, 10}));
  EXPECT_EQ(rows.data.rows[0].tokenLabels, (Ids{8, 9, 10, kIgnored}));
  EXPECT_EQ(rows.data.rows[0].tokenTypeIds, (Ids{0, 0, 0, 0}));
  // A one-token row has nothing to predict.
  EXPECT_EQ(rows.data.rows[1].tokenLabels, (Ids{kIgnored}));
  EXPECT_EQ(rows.targetTokens, 3);
  EXPECT_EQ(rows.truncatedRows, 0);
}

TEST(CausalLmData, ARowsOwnLabelsAreShiftedAndTheirIgnoredOnesKept) {
  CausalLmFiles files;
  // A prompt (7, 8) whose completion (9, 10) alone is learned.
  CausalLmData rows =
      files.load("{\"input_ids\": [7, 8, 9, 10], \"labels\": [-100, -100, 9, 10]}\n");
  EXPECT_EQ(rows.data.rows[0].tokenLabels, (Ids{kIgnored, 9, 10, kIgnored}));
  EXPECT_EQ(rows.targetTokens, 2);
}

TEST(CausalLmData, LongRowsAreCutToSeqLenAndCounted) {
  CausalLmFiles files;
  CausalLmData rows = files.load("{\"input_ids\": [1, 2, 3, 4, 5, 6, 7, 8]}\n"
                                 "{\"input_ids\": [1, 2, 3, 4, 5, 6]}\n");
  EXPECT_EQ(rows.data.rows[0].inputIds, (Ids{1, 2, 3, 4, 5, 6}));
  // The cut row's last kept token is not labelled with the token that was cut away.
  EXPECT_EQ(rows.data.rows[0].tokenLabels, (Ids{2, 3, 4, 5, 6, kIgnored}));
  EXPECT_EQ(rows.truncatedRows, 1);
  EXPECT_EQ(rows.targetTokens, 10);
}

// A byte-level tokenizer of the letters a-c with the merge "a b" and a BOS template.
HfTokenizer letterTokenizer() {
  return parseHfTokenizer(R"({
    "added_tokens": [{"id": 9, "content": "<s>", "single_word": false, "lstrip": false,
                      "rstrip": false, "normalized": false, "special": true}],
    "normalizer": null,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                      "use_regex": false},
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A"}}],
      "special_tokens": {"<s>": {"id": "<s>", "ids": [9], "tokens": ["<s>"]}}},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 1, "b": 2, "c": 3, "ab": 4},
              "merges": ["a b"]}})",
                          "tokenizer.json");
}

TEST(CausalLmData, TextIsTokenizedWithTheTemplatesBos) {
  CausalLmFiles files;
  HfTokenizer tokenizer = letterTokenizer();
  CausalLmData rows = files.load("{\"text\": \"abcab\"}\n", &tokenizer);
  // <s> ab c ab
  EXPECT_EQ(rows.data.rows[0].inputIds, (Ids{9, 4, 3, 4}));
  EXPECT_EQ(rows.data.rows[0].tokenLabels, (Ids{4, 3, 4, kIgnored}));
}

TEST(CausalLmData, ACompletionAloneIsLearnedAndEndsWithEos) {
  CausalLmFiles files;
  HfTokenizer tokenizer = letterTokenizer();
  // <s> ab | c ab <eos 7>: the prompt "ab" encodes as <s> ab (2 tokens, no loss); "abcab"
  // as <s> ab c ab.
  CausalLmData rows = files.load("{\"prompt\": \"ab\", \"completion\": \"cab\"}\n", &tokenizer);
  EXPECT_EQ(rows.data.rows[0].inputIds, (Ids{9, 4, 3, 4, 7}));
  // Shifted: position 1 (ab) predicts c, the first completion token.
  EXPECT_EQ(rows.data.rows[0].tokenLabels, (Ids{kIgnored, 3, 4, 7, kIgnored}));
  EXPECT_EQ(rows.targetTokens, 3);
}

TEST(CausalLmData, TaskDataRefusesAWordPieceVocabularyForACausalLm) {
  CausalLmFiles files;
  std::string vocab = files.write("vocab.txt", "[PAD]\n[UNK]\n");
  DataSettings settings;
  settings.tokenizer.vocabPath = vocab;
  std::string error = errorOf([&] {
    loadTaskData(TaskKind::CausalLM, files.write("train.jsonl", "{\"text\": \"a\"}\n"), kLimits,
                 settings);
  });
  EXPECT_EQ(error, vocab + ": a causal LM's text is tokenized with the model's tokenizer.json, "
                           "not a WordPiece vocabulary");
}

TEST(CausalLmData, PackedRowsKeepEachRowsPositionsLabelsAndDocument) {
  CausalLmFiles files;
  // seq_len 6: rows of 3, 2, 4 and 6 tokens pack as [3 + 2], [4], [6].
  CausalLmData rows = files.load("{\"input_ids\": [1, 2, 3]}\n{\"input_ids\": [4, 5]}\n"
                                 "{\"input_ids\": [6, 7, 8, 9]}\n"
                                 "{\"input_ids\": [10, 11, 12, 13, 14, 15]}\n");
  Dataset packed = packRows(rows.data, kLimits.seqLen);
  ASSERT_EQ(packed.rows.size(), 3u);
  EXPECT_EQ(packed.labels, LabelKind::TokenClass);
  EXPECT_EQ(packed.rows[0].inputIds, (Ids{1, 2, 3, 4, 5}));
  // The first row's last token does not predict the second row's first.
  EXPECT_EQ(packed.rows[0].tokenLabels, (Ids{2, 3, kIgnored, 5, kIgnored}));
  EXPECT_EQ(packed.rows[0].positionIds, (Ids{0, 1, 2, 0, 1}));
  EXPECT_EQ(packed.rows[0].documentIds, (Ids{1, 1, 1, 2, 2}));
  EXPECT_EQ(packed.rows[1].documentIds, (Ids{1, 1, 1, 1}));
  EXPECT_EQ(packed.rows[2].inputIds, (Ids{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(packed.rows[2].positionIds, (Ids{0, 1, 2, 3, 4, 5}));
}

TEST(CausalLmData, TheBatcherWritesAPackedRowsPositionsAndDocumentIds) {
  CausalLmFiles files;
  Dataset packed = packRows(
      files.load("{\"input_ids\": [1, 2, 3]}\n{\"input_ids\": [4, 5]}\n{\"input_ids\": [6]}\n")
          .data,
      kLimits.seqLen);
  // One packed row of 6 tokens: ids, positions, mask, labels, each [1, 6] int32.
  ASSERT_EQ(packed.rows.size(), 1u);
  const InputSlot model[] = {{"input_ids", 0}, {"position_ids", 24}, {"attention_mask", 48}};
  InputSlots slots{model, 3, 72, 96};
  std::vector<std::byte> arena(100);
  Batcher batcher(packed, 1, /*shuffle=*/false, 0);
  MicroBatch batch = batcher.next(arena.data(), slots);
  ASSERT_EQ(batch.seq, 6);
  auto slot = [&](size_t offset) {
    const auto *values = reinterpret_cast<const int32_t *>(arena.data() + offset);
    return Ids(values, values + 6);
  };
  EXPECT_EQ(slot(0), (Ids{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(slot(24), (Ids{0, 1, 2, 0, 1, 0}));
  EXPECT_EQ(slot(48), (Ids{1, 1, 1, 2, 2, 3}));
  EXPECT_EQ(slot(72), (Ids{2, 3, kIgnored, 5, kIgnored, kIgnored}));
  EXPECT_EQ(batcher.lossItemsInNext(1), 3);
}

TEST(CausalLmData, RefusalsNameTheLine) {
  CausalLmFiles files;
  const std::string at = files.path() + ":2: ";
  const std::string first = "{\"input_ids\": [1]}\n";
  EXPECT_EQ(files.refusal(first + "[1, 2]\n"), at + "a row must be a JSON object, got array");
  EXPECT_EQ(files.refusal(first + "{\"input_ids\": [1, 50]}\n"),
            at + "'input_ids'[1] must be an integer in [0, 50), got 50");
  EXPECT_EQ(files.refusal(first + "{\"input_ids\": [1, -100]}\n"),
            at + "'input_ids'[1] must be an integer in [0, 50), got -100");
  EXPECT_EQ(files.refusal(first + "{\"input_ids\": [1, 2], \"labels\": [2, -1]}\n"),
            at + "'labels'[1] must be an integer in [0, 50) or -100, got -1");
  EXPECT_EQ(files.refusal(first + "{\"input_ids\": [1, 2], \"labels\": [2]}\n"),
            at + "'labels' has 1 entries but 'input_ids' has 2");
  EXPECT_EQ(files.refusal(first + "{\"input_ids\": []}\n"), at + "a row needs at least one token");
  EXPECT_EQ(files.refusal(first + "{\"words\": \"a\"}\n"),
            at + "a row needs 'input_ids', 'messages', 'text', or 'prompt' and 'completion'");
  EXPECT_EQ(files.refusal(first + "{\"prompt\": \"a\"}\n"),
            at + "a prompt/completion row needs both 'prompt' and 'completion'");
  EXPECT_EQ(files.refusal(first + "{\"prompt\": \"a\", \"completion\": 2}\n"),
            at + "'completion' must be a string, got number");
  EXPECT_EQ(files.refusal(first + "{\"text\": 3}\n"), at + "'text' must be a string, got number");
  EXPECT_EQ(files.refusal(first + "{\"text\": \"a\"}\n"),
            at + "text rows need the model's tokenizer.json: pass the trainer --vocab FILE (a "
                 "tokenizer.json), or compile the model with [model] from = a Hugging Face "
                 "folder holding tokenizer.json");
  EXPECT_EQ(files.refusal("\n \n"), files.path() + ": no rows");
}

// Letters as unknown tokens (id 0), "\n" 1, "H" 2, "i" 3, the merge "\n H" 4, and the
// added tokens <|im_start|> 40 and <|im_end|> 41.
HfTokenizer chatMlTokenizer() {
  return parseHfTokenizer(R"({
    "added_tokens": [
      {"id": 40, "content": "<|im_start|>", "single_word": false, "lstrip": false,
       "rstrip": false, "normalized": false, "special": true},
      {"id": 41, "content": "<|im_end|>", "single_word": false, "lstrip": false,
       "rstrip": false, "normalized": false, "special": true}],
    "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
    "model": {"type": "BPE", "unk_token": "<unk>",
              "vocab": {"<unk>": 0, "\n": 1, "H": 2, "i": 3, "\nH": 4}, "merges": ["\n H"]}})",
                          "tokenizer.json");
}

/// `rows` read with seq_len `seqLen` and the chat template `chat`.
CausalLmData loadConversations(const CausalLmFiles &files, const std::string &rows, int64_t seqLen,
                               ChatTemplateChoice chat, const HfTokenizer &tokenizer) {
  CausalLmText source{"text", &tokenizer, 7};
  source.chat = std::move(chat);
  return loadCausalLmData(files.write("train.jsonl", rows), {seqLen, 0, 50, 1}, source);
}

const std::string kConversation = R"({"messages": [{"role": "user", "content": "i"}, )"
                                  R"({"role": "assistant", "content": "Hi"}]})"
                                  "\n";

TEST(CausalLmData, AConversationIsLearnedOnTheAssistantsTokensAlone) {
  CausalLmFiles files;
  HfTokenizer tokenizer = chatMlTokenizer();
  CausalLmData rows =
      loadConversations(files, kConversation, 64, {ChatTemplate::ChatMl, "test"}, tokenizer);
  // <|im_start|> u s e r \n i <|im_end|> \n <|im_start|> a s s i s t a n t "\nH" i <|im_end|> \n
  const Ids ids = {40, 0, 0, 0, 0, 1, 3, 41, 1, 40, 0, 0, 0, 3, 0, 0, 0, 0, 0, 4, 3, 41, 1};
  EXPECT_EQ(rows.data.rows[0].inputIds, ids);
  // The assistant's "\nH", "i" and <|im_end|> are the targets of the tokens before them; no
  // eos is appended (the template ends the turn).
  Ids labels(ids.size(), kIgnored);
  labels[18] = 4;
  labels[19] = 3;
  labels[20] = 41;
  EXPECT_EQ(rows.data.rows[0].tokenLabels, labels);
  EXPECT_EQ(rows.targetTokens, 3);
  EXPECT_EQ(rows.conversations, 1);
}

TEST(CausalLmData, LongConversationsAreCutToSeqLenAndCounted) {
  CausalLmFiles files;
  HfTokenizer tokenizer = chatMlTokenizer();
  CausalLmData rows =
      loadConversations(files, kConversation, 20, {ChatTemplate::ChatMl, "test"}, tokenizer);
  ASSERT_EQ(rows.data.rows[0].inputIds.size(), 20u);
  EXPECT_EQ(rows.data.rows[0].tokenLabels[18], 4);
  EXPECT_EQ(rows.data.rows[0].tokenLabels[19], kIgnored);
  EXPECT_EQ(rows.truncatedRows, 1);
  EXPECT_EQ(rows.targetTokens, 1);
}

TEST(CausalLmData, ConversationRefusalsNameTheLineAndKey) {
  CausalLmFiles files;
  HfTokenizer tokenizer = chatMlTokenizer();
  const std::string at = files.path() + ":2: ";
  auto refusal = [&](const std::string &row, ChatTemplateChoice chat) {
    return errorOf(
        [&] { loadConversations(files, kConversation + row + "\n", 64, chat, tokenizer); });
  };
  const ChatTemplateChoice chatMl{ChatTemplate::ChatMl, "test"};
  auto message = [](const std::string &role, const std::string &content) {
    return R"({"role": ")" + role + R"(", "content": ")" + content + R"("})";
  };
  const std::string answer = message("assistant", "H");
  EXPECT_EQ(refusal(R"({"messages": "Hi"})", chatMl),
            at + "'messages' must be a non-empty array of messages, got string");
  EXPECT_EQ(refusal(R"({"messages": []})", chatMl),
            at + "'messages' must be a non-empty array of messages, got []");
  EXPECT_EQ(refusal(R"({"messages": [1]})", chatMl),
            at + "'messages'[0] must be an object with 'role' and 'content', got number");
  EXPECT_EQ(refusal(R"({"messages": [{"role": "user"}]})", chatMl),
            at + "'messages'[0] has no 'content'");
  EXPECT_EQ(
      refusal(R"({"messages": [)" + answer + R"(, {"role": "user", "content": null}]})", chatMl),
      at + "'messages'[1].content must be a string, got null");
  EXPECT_EQ(refusal(R"({"messages": [{"role": 1, "content": "i"}]})", chatMl),
            at + "'messages'[0].role must be a string, got number");
  EXPECT_EQ(refusal(R"({"messages": [)" + message("user", "i") + "]}", chatMl),
            at + "'messages' has no \"assistant\" message, so nothing to learn: the loss is on "
                 "the assistant's tokens only");
  EXPECT_EQ(refusal(R"({"messages": [)" + message("bot", "i") + ", " + answer + "]}", chatMl),
            at + "'messages'[0].role must be \"system\", \"user\" or \"assistant\", got \"bot\"");
  EXPECT_EQ(refusal(R"({"messages": [)" + answer + "]}", {ChatTemplate::Mistral, "test"}),
            at + "'messages'[0].role must be \"user\": after the optional system message, the "
                 "mistral chat template's roles alternate user/assistant/user/..., got "
                 "\"assistant\"");
  // Without a template, the row says why there is none.
  EXPECT_EQ(errorOf([&] { files.load(kConversation, &tokenizer); }),
            files.path() + ":1: 'messages' rows need a chat template");
  EXPECT_EQ(refusal(R"({"messages": [)" + answer + "]}", {std::nullopt, "no template, because"}),
            files.path() + ":1: no template, because");
}

} // namespace
} // namespace bertc
