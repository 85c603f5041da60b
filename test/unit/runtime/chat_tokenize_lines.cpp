// bertc's rows of a JSONL file of conversations ({"messages": [...]} per line) rendered with
// a chat template and a tokenizer.json, read as a causal LM's training data, which
// test/tokenizer/chat-templates.test compares with real chat templates rendered by
// @huggingface/jinja and the tokenizers library
// (test/reference/hf_tokenizers/chat_compare.js). The first output line names the template
// and why it was chosen; then one line per row: its ids, a tab, its next-token labels
// (-100 where no loss is taken).
//   bertc_chat_tokenize_lines tokenizer.json NAME|auto conversations.jsonl
#include "bertc/runtime/causal_lm_data.h"
#include "bertc/runtime/tokenizer_json.h"

#include <iostream>
#include <limits>

namespace {

std::string joined(const std::vector<int32_t> &values) {
  std::string out;
  for (int32_t value : values)
    out += (out.empty() ? "" : " ") + std::to_string(value);
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::cerr << "usage: bertc_chat_tokenize_lines tokenizer.json NAME|auto conversations.jsonl\n";
    return 2;
  }
  try {
    bertc::HfTokenizer tokenizer = bertc::loadHfTokenizer(argv[1]);
    bertc::CausalLmText source{"text", &tokenizer, -1};
    source.chat = bertc::chooseChatTemplate(argv[2], &tokenizer, argv[1]);
    if (!source.chat.chatTemplate)
      throw std::runtime_error(source.chat.basis);
    std::cout << "chat template: " << bertc::chatTemplateName(*source.chat.chatTemplate) << " (by "
              << source.chat.basis << ")\n";
    // Rows and ids as long as they come: nothing is cut or refused for the model's sizes.
    constexpr int64_t kUnbounded = std::numeric_limits<int32_t>::max();
    bertc::CausalLmData rows =
        bertc::loadCausalLmData(argv[3], {kUnbounded, 0, kUnbounded, 1}, source);
    for (const bertc::Example &row : rows.data.rows)
      std::cout << joined(row.inputIds) << "\t" << joined(row.tokenLabels) << "\n";
  } catch (const std::exception &error) {
    std::cerr << "bertc_chat_tokenize_lines: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
