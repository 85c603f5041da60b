// Fuzzes the tokenizer.json reader and the BPE tokenizers it builds: the input is parsed as
// a tokenizer.json; one that is accepted encodes a fixed text of many scripts and the input
// itself, with and without special tokens, and decodes what it gave. Only TokenizerError
// may come out; every token's byte span must lie in its text.

#include "fuzz_files.h"

#include "bertc/runtime/tokenizer_json.h"

#include <string>
#include <string_view>

namespace {

void encodeAndDecode(const bertc::HfTokenizer &tokenizer, std::string_view text) {
  try {
    for (bool special : {false, true}) {
      std::vector<int32_t> ids;
      for (const bertc::Token &token : tokenizer.encode(text, special)) {
        if (token.begin > token.end || token.end > text.size())
          __builtin_trap();
        ids.push_back(token.id);
      }
      (void)tokenizer.decode(ids, special);
    }
  } catch (const bertc::TokenizerError &) {
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  try {
    bertc::HfTokenizer tokenizer = bertc::parseHfTokenizer(input, "tokenizer.json");
    encodeAndDecode(tokenizer, "Hello, world! It's 2024: caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 "
                               "\xf0\x9f\x98\x80  \n\t<s> x");
    encodeAndDecode(tokenizer, input);
  } catch (const bertc::TokenizerError &) {
  }
  return 0;
}
