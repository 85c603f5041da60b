// The chat templates: each template's rendering of the same conversations written out by
// hand from its model's Jinja template, with the assistant's spans marked [[...]]; the
// refusals of Mistral's and Llama 2's alternation rule and of unknown roles; the assistant
// mask of the encoded text (a token straddling a span's start counts, as
// return_assistant_tokens_mask counts it); and the choice of a template from the job's
// setting, tokenizer_config.json's chat_template or the tokenizer's added tokens.
#include "bertc/runtime/chat_template.h"
#include "bertc/runtime/tokenizer_json.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;
using Chat = std::vector<ChatMessage>;

/// `chat`'s text with each assistant span inside [[ and ]].
std::string marked(const RenderedChat &chat) {
  std::string out;
  size_t from = 0;
  for (auto [begin, end] : chat.assistantSpans) {
    out +=
        chat.text.substr(from, begin - from) + "[[" + chat.text.substr(begin, end - begin) + "]]";
    from = end;
  }
  return out + chat.text.substr(from);
}

std::string rendered(ChatTemplate chatTemplate, const Chat &chat) {
  return marked(renderChat(chatTemplate, chat));
}

// Contents with white space at their ends, which some templates strip and others keep.
const ChatMessage kSystem{"system", " Be brief. "};
const Chat kTwoTurns = {
    {"user", "Hi\n"}, {"assistant", " Hello! "}, {"user", "Again?"}, {"assistant", "Yes."}};

Chat withSystem(const Chat &chat) {
  Chat out = {kSystem};
  out.insert(out.end(), chat.begin(), chat.end());
  return out;
}

TEST(ChatTemplate, Llama3StripsEachMessageBetweenHeadersAndEotTokens) {
  EXPECT_EQ(rendered(ChatTemplate::Llama3, withSystem(kTwoTurns)),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n[[Hello!<|eot_id|>]]"
            "<|start_header_id|>user<|end_header_id|>\n\nAgain?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n[[Yes.<|eot_id|>]]");
  // No system message, none added; Python's strip() takes Unicode spaces too.
  EXPECT_EQ(
      rendered(ChatTemplate::Llama3, {{"user", "\xC2\xA0Hi"}, {"assistant", "Ok\xE3\x80\x80"}}),
      "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
      "<|start_header_id|>assistant<|end_header_id|>\n\n[[Ok<|eot_id|>]]");
}

TEST(ChatTemplate, Llama31AlwaysWritesItsDatedSystemHeader) {
  const std::string header = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                             "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";
  EXPECT_EQ(rendered(ChatTemplate::Llama31, withSystem({kTwoTurns[0], kTwoTurns[1]})),
            header + "Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                     "<|start_header_id|>assistant<|end_header_id|>\n\n[[Hello!<|eot_id|>]]");
  EXPECT_EQ(rendered(ChatTemplate::Llama31, {kTwoTurns[0], kTwoTurns[1]}),
            header + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                     "<|start_header_id|>assistant<|end_header_id|>\n\n[[Hello!<|eot_id|>]]");
}

TEST(ChatTemplate, ChatMlKeepsContentsAsTheyAre) {
  const std::string turns = "<|im_start|>user\nHi\n<|im_end|>\n"
                            "<|im_start|>assistant\n[[ Hello! <|im_end|>]]\n"
                            "<|im_start|>user\nAgain?<|im_end|>\n"
                            "<|im_start|>assistant\n[[Yes.<|im_end|>]]\n";
  EXPECT_EQ(rendered(ChatTemplate::ChatMl, kTwoTurns), turns);
  EXPECT_EQ(rendered(ChatTemplate::ChatMl, withSystem(kTwoTurns)),
            "<|im_start|>system\n Be brief. <|im_end|>\n" + turns);
  // Qwen's templates write their default system message where the conversation has none.
  EXPECT_EQ(rendered(ChatTemplate::Qwen2, kTwoTurns),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" + turns);
  EXPECT_EQ(rendered(ChatTemplate::Qwen25, kTwoTurns),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n" +
                turns);
  EXPECT_EQ(rendered(ChatTemplate::Qwen25, withSystem(kTwoTurns)),
            "<|im_start|>system\n Be brief. <|im_end|>\n" + turns);
}

TEST(ChatTemplate, MistralPutsTheSystemMessageBeforeTheFirstUserMessage) {
  EXPECT_EQ(rendered(ChatTemplate::Mistral, withSystem(kTwoTurns)),
            "<s> [INST]  Be brief. \n\nHi\n [/INST] [[ Hello! </s>]] [INST] Again? [/INST] "
            "[[Yes.</s>]]");
  EXPECT_EQ(rendered(ChatTemplate::Mistral, {kTwoTurns[0], kTwoTurns[1]}),
            "<s> [INST] Hi\n [/INST] [[ Hello! </s>]]");
}

TEST(ChatTemplate, Llama2StartsEachTurnWithBosAndWrapsTheSystemMessage) {
  EXPECT_EQ(rendered(ChatTemplate::Llama2, withSystem(kTwoTurns)),
            "<s>[INST] <<SYS>>\n Be brief. \n<</SYS>>\n\nHi [/INST] [[Hello! </s>]]"
            "<s>[INST] Again? [/INST] [[Yes. </s>]]");
  // A conversation may end with the user's turn: nothing of it is the assistant's.
  EXPECT_EQ(rendered(ChatTemplate::Llama2, {kTwoTurns[0], kTwoTurns[1], kTwoTurns[2]}),
            "<s>[INST] Hi [/INST] [[Hello! </s>]]<s>[INST] Again? [/INST]");
}

TEST(ChatTemplate, RefusalsNameTheMessage) {
  Chat tool = {kTwoTurns[0], {"tool", "42"}, kTwoTurns[1]};
  EXPECT_EQ(errorOf([&] { renderChat(ChatTemplate::ChatMl, tool); }),
            "'messages'[1].role must be \"system\", \"user\" or \"assistant\", got \"tool\"");
  EXPECT_EQ(errorOf([&] {
              renderChat(ChatTemplate::Mistral, {kTwoTurns[0], kTwoTurns[0], kTwoTurns[1]});
            }),
            "'messages'[1].role must be \"assistant\": after the optional system message, the "
            "mistral chat template's roles alternate user/assistant/user/..., got \"user\"");
  EXPECT_EQ(errorOf([&] { renderChat(ChatTemplate::Llama2, withSystem({kTwoTurns[1]})); }),
            "'messages'[1].role must be \"user\": after the optional system message, the llama2 "
            "chat template's roles alternate user/assistant/user/..., got \"assistant\"");
  EXPECT_EQ(
      errorOf([&] { renderChat(ChatTemplate::Mistral, {kTwoTurns[0], kTwoTurns[1], kSystem}); }),
      "'messages'[2].role: the mistral chat template allows a system message only first");
  // The templates without the rule take any order.
  EXPECT_NO_THROW(renderChat(ChatTemplate::Llama3, {kTwoTurns[1], kSystem, kTwoTurns[1]}));
}

// Letters a-z as unknown tokens (id 0), "\n" 1, "H" 2, "i" 3, and the merge "\n H" 4; the
// added tokens <|im_start|> 40 and <|im_end|> 41.
constexpr const char *kChatMlTokenizer = R"({
    "added_tokens": [
      {"id": 40, "content": "<|im_start|>", "single_word": false, "lstrip": false,
       "rstrip": false, "normalized": false, "special": true},
      {"id": 41, "content": "<|im_end|>", "single_word": false, "lstrip": false,
       "rstrip": false, "normalized": false, "special": true}],
    "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
    "model": {"type": "BPE", "unk_token": "<unk>",
              "vocab": {"<unk>": 0, "\n": 1, "H": 2, "i": 3, "\nH": 4}, "merges": ["\n H"]}})";

TEST(ChatTemplate, TokensOverlappingAnAssistantSpanAreTheAssistants) {
  HfTokenizer tokenizer = parseHfTokenizer(kChatMlTokenizer, "tokenizer.json");
  RenderedChat chat = renderChat(ChatTemplate::ChatMl, {{"user", "i"}, {"assistant", "Hi"}});
  ChatTokens tokens = tokenizeChat(chat, tokenizer);
  // <|im_start|> u s e r \n i <|im_end|> \n <|im_start|> a s s i s t a n t "\nH" i <|im_end|> \n
  EXPECT_EQ(tokens.ids, (std::vector<int32_t>{40, 0, 0, 0, 0, 1, 3, 41, 1, 40, 0, 0,
                                              0,  3, 0, 0, 0, 0, 0, 4,  3, 41, 1}));
  // "\nH" holds the span's first character, so it is the assistant's, as is <|im_end|>; the
  // newline after it is not.
  std::vector<bool> assistant(23, false);
  assistant[19] = assistant[20] = assistant[21] = true;
  EXPECT_EQ(tokens.assistant, assistant);
}

class ChatTemplateChoiceTest : public ::testing::Test {
protected:
  /// The choice for `setting` with kChatMlTokenizer in the scratch folder, beside a
  /// tokenizer_config.json holding `config` (none when empty).
  ChatTemplateChoice choose(std::string_view setting, const std::string &config = "") {
    if (!config.empty())
      testing::writeText(dir.file("tokenizer_config.json"), config);
    return chooseChatTemplate(setting, &tokenizer, dir.file("tokenizer.json"));
  }
  std::string name(const ChatTemplateChoice &choice) {
    return choice.chatTemplate ? std::string(chatTemplateName(*choice.chatTemplate))
                               : "none: " + choice.basis;
  }

  ScratchDir dir;
  HfTokenizer tokenizer = parseHfTokenizer(kChatMlTokenizer, "tokenizer.json");
};

TEST_F(ChatTemplateChoiceTest, TheJobsSettingComesFirst) {
  ChatTemplateChoice choice = choose("qwen2.5", R"({"chat_template": "[INST]"})");
  EXPECT_EQ(name(choice), "qwen2.5");
  EXPECT_EQ(choice.basis, "[data] chat_template");
}

TEST_F(ChatTemplateChoiceTest, TokenizerConfigsChatTemplateDecidesByWhatItWrites) {
  EXPECT_EQ(name(choose("", R"({"chat_template": "{{'<|im_start|>' + m}}"})")), "chatml");
  EXPECT_EQ(name(choose("auto", R"({"chat_template": "<|im_start|>system\nYou are Qwen, created )"
                                R"(by Alibaba Cloud. You are a helpful assistant."})")),
            "qwen2.5");
  ChatTemplateChoice qwen2 = choose(
      "", R"({"chat_template": [{"name": "default", "template": "<|im_start|>system\nYou are a )"
          R"(helpful assistant."}, {"name": "tool_use", "template": "?"}]})");
  EXPECT_EQ(name(qwen2), "qwen2");
  EXPECT_EQ(qwen2.basis, "the chat_template of " + dir.file("tokenizer_config.json"));
}

TEST_F(ChatTemplateChoiceTest, WithoutAChatTemplateTheAddedTokensDecide) {
  ChatTemplateChoice choice = choose("", R"({"eos_token": "<|im_end|>"})");
  EXPECT_EQ(name(choice), "chatml");
  EXPECT_EQ(choice.basis, "the added token <|im_start|> of " + dir.file("tokenizer.json") +
                              " (no chat_template in " + dir.file("tokenizer_config.json") + ")");
}

TEST_F(ChatTemplateChoiceTest, NoChoiceSaysWhy) {
  const std::string names = "\"llama3\", \"llama3.1\", \"chatml\", \"qwen2\", \"qwen2.5\", "
                            "\"mistral\", \"llama2\"";
  EXPECT_EQ(name(choose("llama3")),
            "none: the llama3 chat template (by [data] chat_template) writes <|begin_of_text|>, "
            "which is not an added token of " +
                dir.file("tokenizer.json") + "; set [data] chat_template to the model's: " + names);
  EXPECT_EQ(name(choose("", R"({"chat_template": "<|start_header_id|>"})")),
            "none: the llama3 chat template (by the chat_template of " +
                dir.file("tokenizer_config.json") + ") writes <|begin_of_text|>, which is not an " +
                "added token of " + dir.file("tokenizer.json") +
                "; set [data] chat_template to the model's: " + names);
  EXPECT_EQ(name(choose("", R"({"chat_template": "{{ messages }}"})")),
            "none: cannot tell which chat template renders 'messages' rows: the chat_template of " +
                dir.file("tokenizer_config.json") +
                " writes none of the tokens bertc's templates write; set [data] chat_template to "
                "one of " +
                names);
  EXPECT_EQ(name(chooseChatTemplate("", nullptr, "")),
            "none: 'messages' rows need the model's tokenizer.json: pass the trainer --vocab FILE "
            "(a tokenizer.json), or compile the model with [model] from = a Hugging Face folder "
            "holding tokenizer.json");
  EXPECT_EQ(name(choose("", "[1")).substr(0, 6 + dir.file("tokenizer_config.json").size()),
            "none: " + dir.file("tokenizer_config.json"));
}

} // namespace
} // namespace bertc
