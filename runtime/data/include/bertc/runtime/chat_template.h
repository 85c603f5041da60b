// Chat templates of decoder model families (chat_templates.def): a conversation rendered as
// the family's tokenizer_config.json chat_template renders it without a generation prompt,
// the text tokenized as one string (its special tokens becoming their added-token ids), and
// which tokens are the assistant's (each assistant message's content and its end-of-turn
// token), the tokens TRL's assistant_only_loss learns. Also which template a tokenizer's
// files imply when the job names none.
#pragma once

#include "bertc/runtime/hf_tokenizer.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bertc {

/// A chat template bertc renders.
enum class ChatTemplate : uint8_t {
#define BERTC_CHAT_TEMPLATE(enumerator, name) enumerator,
#include "bertc/abi/chat_templates.def"
#undef BERTC_CHAT_TEMPLATE
};

/// The template named `name` ([data] chat_template), or none.
std::optional<ChatTemplate> findChatTemplate(std::string_view name);
/// The name of `chatTemplate` in the job.
std::string_view chatTemplateName(ChatTemplate chatTemplate);
/// Every template's name, quoted and comma-separated, for error messages.
std::string chatTemplateNames();

/// One message of a conversation; role is "system", "user" or "assistant".
struct ChatMessage {
  std::string role;
  std::string content;
};

/// A conversation the template refuses; what() names the message ("'messages'[2].role ...").
class ChatTemplateError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A rendered conversation: the text, and the byte ranges [begin, end) of it that are the
/// assistant's, in order.
struct RenderedChat {
  std::string text;
  std::vector<std::pair<size_t, size_t>> assistantSpans;
};

/// `messages` rendered with `chatTemplate`, as transformers' apply_chat_template renders
/// them with add_generation_prompt=False. Throws ChatTemplateError where the real template
/// raises (roles that do not alternate as Mistral's and Llama 2's require, a system message
/// after the first there) and for a role other than system, user and assistant.
RenderedChat renderChat(ChatTemplate chatTemplate, const std::vector<ChatMessage> &messages);

/// The added tokens `chatTemplate` writes (its bos, headers, end-of-turn tokens), each of
/// which the tokenizer must have as one id.
std::vector<std::string_view> chatTemplateTokens(ChatTemplate chatTemplate);

/// A rendered conversation's token ids and, per token, whether it is the assistant's.
struct ChatTokens {
  std::vector<int32_t> ids;
  std::vector<bool> assistant;
};

/// `chat`'s text encoded whole without the post-processor's tokens (the template writes
/// its own bos), as apply_chat_template(tokenize=True) encodes it. A token is the
/// assistant's when its span overlaps an assistant span, as return_assistant_tokens_mask
/// marks the tokens from the one holding a span's first character to the one holding its
/// last. Throws TokenizerError for text that is not UTF-8.
ChatTokens tokenizeChat(const RenderedChat &chat, const HfTokenizer &tokenizer);

/// The template of a run's `messages` rows, or why there is none (reported at the first
/// such row).
struct ChatTemplateChoice {
  std::optional<ChatTemplate> chatTemplate;
  /// Where the template came from ("[data] chat_template", "the chat_template of
  /// FILE", ...), or, without one, why not.
  std::string basis;
};

/// The template named by `setting` ([data] chat_template; "" or "auto": decided from the
/// tokenizer's files), for `tokenizer` read from `tokenizerPath` (nullptr: none). Without a
/// setting:
///  1. tokenizer_config.json beside the tokenizer, when it has a chat_template, decides by
///     what it writes: "<|start_header_id|>" is llama3, or llama3.1 with its "Cutting
///     Knowledge Date" header; "<|im_start|>" is chatml, or qwen2.5 and qwen2 with their
///     default system messages (another ChatML template renders as chatml: Qwen3's empty
///     <think> block in the last answer is not written); "[INST]" is llama2 with
///     "<<SYS>>", else mistral;
///  2. else the tokenizer's added tokens: "<|start_header_id|>" is llama3, "<|im_start|>"
///     chatml, and a SentencePiece-style tokenizer with "<s>" and "</s>" mistral.
/// A template whose tokens (chatTemplateTokens) the tokenizer lacks is no choice.
ChatTemplateChoice chooseChatTemplate(std::string_view setting, const HfTokenizer *tokenizer,
                                      const std::string &tokenizerPath);

} // namespace bertc
