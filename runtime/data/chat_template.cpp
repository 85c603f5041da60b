// The chat templates (chat_template.h), each written out as the Jinja template of its
// models renders a conversation without a generation prompt; "strip" is Python's
// str.strip() (Jinja's trim filter), "[...]" marks the assistant's span:
//   llama3    <|begin_of_text|> then per message
//             <|start_header_id|>ROLE<|end_header_id|>\n\n[STRIP(CONTENT)<|eot_id|>]
//   llama3.1  <|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n
//             Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n
//             STRIP(FIRST SYSTEM MESSAGE, or "")<|eot_id|>, then the others as llama3
//             (the date is the template's default; Llama 3.2's template puts the day of
//             rendering there when transformers offers strftime_now)
//   chatml    per message <|im_start|>ROLE\n[CONTENT<|im_end|>]\n; qwen2 and qwen2.5 first
//             write their default system message when the first message is not a system one
//   mistral   <s>, an optional first system message, then alternating user/assistant turns
//             " [INST] " + (SYSTEM\n\n before the first) USER + " [/INST]", " " [ASSISTANT</s>]
//   llama2    an optional first system message, then alternating user/assistant turns
//             "<s>[INST] " STRIP(<<SYS>>\nSYSTEM\n<</SYS>>\n\n before the first, USER)
//             " [/INST]", " " [STRIP(ASSISTANT) </s>]
#include "bertc/runtime/chat_template.h"

#include "bertc/runtime/input_files.h"
#include "bertc/runtime/tokenizer.h"
#include "bertc/runtime/unicode_text.h"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace bertc {
namespace {

struct TemplateName {
  ChatTemplate chatTemplate;
  std::string_view name;
};

constexpr TemplateName kTemplates[] = {
#define BERTC_CHAT_TEMPLATE(enumerator, name) {ChatTemplate::enumerator, name},
#include "bertc/abi/chat_templates.def"
#undef BERTC_CHAT_TEMPLATE
};

constexpr std::string_view kQwen2System = "You are a helpful assistant.";
constexpr std::string_view kQwen25System =
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
constexpr std::string_view kLlama31SystemHeader =
    "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";

/// `text` without the leading and trailing characters Python's str.isspace() accepts.
std::string_view stripped(std::string_view text) {
  std::vector<unicode::Char> chars;
  unicode::decodeUtf8(text, 0, chars);
  auto space = [](const unicode::Char &c) {
    return (unicode::textProperties(c.codePoint) & unicode::kSpaceChar) != 0;
  };
  size_t first = 0, last = chars.size();
  while (first < last && space(chars[first]))
    ++first;
  while (last > first && space(chars[last - 1]))
    --last;
  if (first == last)
    return {};
  return text.substr(chars[first].begin, chars[last - 1].end - chars[first].begin);
}

/// The text being rendered and its assistant spans.
class ChatWriter {
public:
  void write(std::string_view text) { chat_.text += text; }
  /// Appends the assistant's `content` and `end` as one span.
  void writeAssistant(std::string_view content, std::string_view end) {
    size_t begin = chat_.text.size();
    write(content);
    write(end);
    chat_.assistantSpans.emplace_back(begin, chat_.text.size());
  }
  RenderedChat take() { return std::move(chat_); }

private:
  RenderedChat chat_;
};

std::string jsonQuoted(std::string_view text) { return nlohmann::json(std::string(text)).dump(); }

std::string at(size_t index) { return "'messages'[" + std::to_string(index) + "]"; }

/// Llama 3's messages from `first` on: header, stripped content, <|eot_id|>.
void writeLlama3Messages(const std::vector<ChatMessage> &messages, size_t first, ChatWriter &out) {
  for (size_t i = first; i < messages.size(); ++i) {
    out.write("<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n");
    std::string_view content = stripped(messages[i].content);
    if (messages[i].role == "assistant")
      out.writeAssistant(content, "<|eot_id|>");
    else
      out.write(std::string(content) + "<|eot_id|>");
  }
}

/// Mistral's and Llama 2's rule: after an optional first system message, user and
/// assistant turns alternate, starting with the user's.
void checkAlternation(const std::vector<ChatMessage> &messages, size_t first,
                      std::string_view name) {
  for (size_t i = first; i < messages.size(); ++i) {
    const std::string &role = messages[i].role;
    if (role == "system")
      throw ChatTemplateError(at(i) + ".role: the " + std::string(name) +
                              " chat template allows a system message only first");
    std::string_view expected = (i - first) % 2 == 0 ? "user" : "assistant";
    if (role != expected)
      throw ChatTemplateError(at(i) + ".role must be " + jsonQuoted(expected) + ": after the " +
                              "optional system message, the " + std::string(name) +
                              " chat template's roles alternate user/assistant/user/..., got " +
                              jsonQuoted(role));
  }
}

RenderedChat render(ChatTemplate chatTemplate, const std::vector<ChatMessage> &messages) {
  ChatWriter out;
  bool system = !messages.empty() && messages.front().role == "system";
  switch (chatTemplate) {
  case ChatTemplate::Llama3:
    out.write("<|begin_of_text|>");
    writeLlama3Messages(messages, 0, out);
    break;
  case ChatTemplate::Llama31:
    out.write("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n");
    out.write(kLlama31SystemHeader);
    out.write(system ? stripped(messages.front().content) : std::string_view());
    out.write("<|eot_id|>");
    writeLlama3Messages(messages, system ? 1 : 0, out);
    break;
  case ChatTemplate::ChatMl:
  case ChatTemplate::Qwen2:
  case ChatTemplate::Qwen25:
    if (!system && chatTemplate != ChatTemplate::ChatMl)
      out.write("<|im_start|>system\n" +
                std::string(chatTemplate == ChatTemplate::Qwen2 ? kQwen2System : kQwen25System) +
                "<|im_end|>\n");
    for (const ChatMessage &message : messages) {
      out.write("<|im_start|>" + message.role + "\n");
      if (message.role == "assistant")
        out.writeAssistant(message.content, "<|im_end|>");
      else
        out.write(message.content + "<|im_end|>");
      out.write("\n");
    }
    break;
  case ChatTemplate::Mistral:
    checkAlternation(messages, system ? 1 : 0, "mistral");
    out.write("<s>");
    for (size_t i = system ? 1 : 0; i < messages.size(); ++i) {
      const std::string &content = messages[i].content;
      if (messages[i].role == "assistant") {
        out.write(" ");
        out.writeAssistant(content, "</s>");
      } else if (system && i == 1) {
        out.write(" [INST] " + messages[0].content + "\n\n" + content + " [/INST]");
      } else {
        out.write(" [INST] " + content + " [/INST]");
      }
    }
    break;
  case ChatTemplate::Llama2:
    checkAlternation(messages, system ? 1 : 0, "llama2");
    for (size_t i = system ? 1 : 0; i < messages.size(); ++i) {
      if (messages[i].role == "assistant") {
        out.write(" ");
        out.writeAssistant(stripped(messages[i].content), " </s>");
        continue;
      }
      std::string content = messages[i].content;
      if (system && i == 1)
        content = "<<SYS>>\n" + messages[0].content + "\n<</SYS>>\n\n" + content;
      out.write("<s>[INST] " + std::string(stripped(content)) + " [/INST]");
    }
    break;
  }
  return out.take();
}

/// Whether `tokenizer` has `content` as an added token.
bool hasAddedToken(const HfTokenizer &tokenizer, std::string_view content) {
  for (const AddedToken &token : tokenizer.spec().addedTokens)
    if (token.content == content)
      return true;
  return false;
}

/// The template tokenizer_config.json's `chatTemplate` text is written for, by what it
/// writes (see chooseChatTemplate); none for another kind of template.
std::optional<ChatTemplate> recognizeTemplate(std::string_view chatTemplate) {
  auto has = [&](std::string_view text) { return chatTemplate.find(text) != chatTemplate.npos; };
  if (has("<|start_header_id|>"))
    return has("Cutting Knowledge Date") ? ChatTemplate::Llama31 : ChatTemplate::Llama3;
  if (has("<|im_start|>"))
    return has(kQwen25System)  ? ChatTemplate::Qwen25
           : has(kQwen2System) ? ChatTemplate::Qwen2
                               : ChatTemplate::ChatMl;
  if (has("[INST]"))
    return has("<<SYS>>") ? ChatTemplate::Llama2 : ChatTemplate::Mistral;
  return std::nullopt;
}

/// The chat_template of the tokenizer_config.json at `configPath` ("" when the file or the
/// key is absent; of a list of named templates, the "default" one).
std::string configChatTemplate(const std::string &configPath) {
  std::error_code ignored; // a folder that cannot be listed has no config to read
  if (!std::filesystem::exists(configPath, ignored))
    return {};
  nlohmann::json config = parseJsonFile<TokenizerError>(
      readWholeFile<TokenizerError>(configPath, kTokenizerConfigLimit), configPath);
  if (!config.is_object() || !config.contains("chat_template"))
    return {};
  const nlohmann::json &chatTemplate = config["chat_template"];
  if (chatTemplate.is_string())
    return chatTemplate.get<std::string>();
  if (chatTemplate.is_array())
    for (const nlohmann::json &named : chatTemplate)
      if (named.is_object() && named.value("name", "") == "default" && named.contains("template") &&
          named["template"].is_string())
        return named["template"].get<std::string>();
  return {};
}

/// The template `tokenizer`'s files imply (steps 1 and 2 of chooseChatTemplate).
ChatTemplateChoice inferChatTemplate(const HfTokenizer &tokenizer,
                                     const std::string &tokenizerPath) {
  std::string configPath =
      (std::filesystem::path(tokenizerPath).parent_path() / "tokenizer_config.json").string();
  std::string configTemplate = configChatTemplate(configPath);
  if (!configTemplate.empty()) {
    if (std::optional<ChatTemplate> recognized = recognizeTemplate(configTemplate))
      return {recognized, "the chat_template of " + configPath};
    return {std::nullopt, "cannot tell which chat template renders 'messages' rows: the "
                          "chat_template of " +
                              configPath +
                              " writes none of the tokens bertc's templates write; "
                              "set [data] chat_template to one of " +
                              chatTemplateNames()};
  }
  std::string noConfig = " (no chat_template in " + configPath + ")";
  if (hasAddedToken(tokenizer, "<|start_header_id|>"))
    return {ChatTemplate::Llama3,
            "the added token <|start_header_id|> of " + tokenizerPath + noConfig};
  if (hasAddedToken(tokenizer, "<|im_start|>"))
    return {ChatTemplate::ChatMl, "the added token <|im_start|> of " + tokenizerPath + noConfig};
  if (tokenizer.spec().normalizer == HfTokenizerSpec::Normalizer::kPrependReplace &&
      hasAddedToken(tokenizer, "<s>") && hasAddedToken(tokenizer, "</s>"))
    return {ChatTemplate::Mistral,
            "the SentencePiece-style tokenizer " + tokenizerPath + " with <s> and </s>" + noConfig};
  return {std::nullopt,
          "cannot tell which chat template renders 'messages' rows: " + tokenizerPath +
              " has none of the added tokens <|start_header_id|>, <|im_start|>, "
              "or <s> and </s> with SentencePiece's normalizer" +
              noConfig + "; set [data] chat_template to one of " + chatTemplateNames()};
}

} // namespace

std::optional<ChatTemplate> findChatTemplate(std::string_view name) {
  for (const TemplateName &entry : kTemplates)
    if (entry.name == name)
      return entry.chatTemplate;
  return std::nullopt;
}

std::string_view chatTemplateName(ChatTemplate chatTemplate) {
  for (const TemplateName &entry : kTemplates)
    if (entry.chatTemplate == chatTemplate)
      return entry.name;
  return {};
}

std::string chatTemplateNames() {
  std::string names;
  for (const TemplateName &entry : kTemplates)
    names += (names.empty() ? "" : ", ") + jsonQuoted(entry.name);
  return names;
}

RenderedChat renderChat(ChatTemplate chatTemplate, const std::vector<ChatMessage> &messages) {
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string &role = messages[i].role;
    if (role != "system" && role != "user" && role != "assistant")
      throw ChatTemplateError(at(i) + ".role must be \"system\", \"user\" or \"assistant\", got " +
                              jsonQuoted(role));
  }
  return render(chatTemplate, messages);
}

std::vector<std::string_view> chatTemplateTokens(ChatTemplate chatTemplate) {
  switch (chatTemplate) {
  case ChatTemplate::Llama3:
  case ChatTemplate::Llama31:
    return {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"};
  case ChatTemplate::ChatMl:
  case ChatTemplate::Qwen2:
  case ChatTemplate::Qwen25:
    return {"<|im_start|>", "<|im_end|>"};
  case ChatTemplate::Mistral:
  case ChatTemplate::Llama2:
    return {"<s>", "</s>"};
  }
  return {};
}

ChatTokens tokenizeChat(const RenderedChat &chat, const HfTokenizer &tokenizer) {
  ChatTokens tokens;
  const std::vector<std::pair<size_t, size_t>> &spans = chat.assistantSpans;
  size_t span = 0;
  for (const Token &token : tokenizer.encode(chat.text, /*addSpecialTokens=*/false)) {
    while (span < spans.size() && spans[span].second <= token.begin)
      ++span;
    tokens.ids.push_back(token.id);
    tokens.assistant.push_back(span < spans.size() && spans[span].first < token.end &&
                               token.begin < spans[span].second);
  }
  return tokens;
}

ChatTemplateChoice chooseChatTemplate(std::string_view setting, const HfTokenizer *tokenizer,
                                      const std::string &tokenizerPath) {
  if (!tokenizer)
    return {std::nullopt, "'messages' rows need the model's tokenizer.json: pass the trainer "
                          "--vocab FILE (a tokenizer.json), or compile the model with [model] "
                          "from = a Hugging Face folder holding tokenizer.json"};
  ChatTemplateChoice choice;
  if (setting.empty() || setting == "auto") {
    try {
      choice = inferChatTemplate(*tokenizer, tokenizerPath);
    } catch (const TokenizerError &error) {
      return {std::nullopt, error.what()};
    }
  } else {
    choice = {findChatTemplate(setting), "[data] chat_template"};
    if (!choice.chatTemplate)
      return {std::nullopt,
              "[data] chat_template " + jsonQuoted(setting) + " is none of " + chatTemplateNames()};
  }
  if (!choice.chatTemplate)
    return choice;
  for (std::string_view token : chatTemplateTokens(*choice.chatTemplate))
    if (!hasAddedToken(*tokenizer, token))
      return {std::nullopt,
              "the " + std::string(chatTemplateName(*choice.chatTemplate)) + " chat template (by " +
                  choice.basis + ") writes " + std::string(token) +
                  ", which is not an added token of " + tokenizerPath +
                  "; set [data] chat_template to the model's: " + chatTemplateNames()};
  return choice;
}

} // namespace bertc
