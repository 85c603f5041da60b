// A causal LM's training rows: JSONL token ids (optionally with their own labels), text
// tokenized with the model's tokenizer.json, prompt/completion pairs or chat conversations,
// each labelled with its next tokens.
#pragma once

#include "bertc/runtime/chat_template.h"
#include "bertc/runtime/hf_tokenizer.h"
#include "bertc/runtime/jsonl_data.h"

#include <optional>
#include <string>

namespace bertc {

/// A causal LM's rows and how they were read.
struct CausalLmData {
  Dataset data;
  int64_t truncatedRows = 0; ///< rows longer than seq_len, cut to it
  int64_t targetTokens = 0;  ///< labelled next tokens over every row
  int64_t conversations = 0; ///< `messages` rows
};

/// How a causal LM's text rows become tokens.
struct CausalLmText {
  std::string textField = "text";         ///< [data] text: the field of plain-text rows
  const HfTokenizer *tokenizer = nullptr; ///< the model's tokenizer.json; none: ids only
  int64_t eosId = -1;                     ///< end of sequence after a completion; -1: none
  /// The template of `messages` rows, or why there is none (the error of the first such row).
  ChatTemplateChoice chat = {std::nullopt, "'messages' rows need a chat template"};
};

/// Reads the JSONL file at `path`, one row per line, either
///  - {"input_ids": [...], "labels": [...] (optional)}: ids in [0, limits.vocab), labels
///    the same length, each an id or -100 (no loss there); without labels every id is its
///    own label, as Hugging Face's causal LMs take labels = input_ids;
///  - {"prompt": "...", "completion": "..."}: as TRL's SFTTrainer, prompt + completion
///    encoded with the tokenizer's special tokens, then the end-of-sequence id; the loss
///    only on the tokens after the prompt's own encoding;
///  - {"<textField>": "..."}: the text encoded with the tokenizer and its special tokens
///    (the post-processor's BOS), every token labelled;
///  - {"messages": [{"role": "system" | "user" | "assistant", "content": "..."}, ...]}: as
///    TRL's SFTTrainer with assistant_only_loss, the conversation rendered with source.chat's
///    template and encoded whole (tokenizeChat), the loss on the assistant's tokens only
///    (each assistant message's content and end-of-turn token); a conversation needs an
///    assistant message.
/// A row is cut to limits.seqLen tokens (counted in truncatedRows). Its labels are shifted
/// as the model's loss shifts them: position t is labelled with label t + 1, the last
/// position with -100, so Dataset rows carry next-token labels (LabelKind::TokenClass) and
/// their count is the step's loss normalizer (the Trainer's num_items_in_batch).
/// Text rows without a tokenizer are an error naming the file and line, as are malformed
/// and empty rows, ids out of range and labels of another length, `messages` rows without
/// a template (naming why there is none), a message that is not an object of string role
/// and content, and a conversation the template refuses (naming the message and key); a
/// file without rows names the file.
CausalLmData loadCausalLmData(const std::string &path, const DataLimits &limits,
                              const CausalLmText &source);

/// `data`'s rows packed into rows of at most `seqLen` tokens ([data] packing): in order,
/// each row joins the current packed row while it fits, else starts the next one, so no
/// row is split and none crosses into another's positions. A packed row's tokens keep
/// their row's positions (restarting at 0 per row) and carry their row's 1-based index
/// within it as document id, so that causal attention never crosses rows; each row's
/// labels stay its own (its last token predicts nothing).
Dataset packRows(const Dataset &data, int64_t seqLen);

} // namespace bertc
