// Fuzzes the WordPiece tokenizer and vocab.txt: the input is tokenized (alone, encoded, and
// as a pair) with the sample vocabulary, cased and uncased; then it is read as a vocab.txt
// which, when valid, tokenizes a fixed text and the input. Only TokenizerError may come out;
// every token's byte span must lie in its text.

#include "fuzz_files.h"

#include "bertc/runtime/tokenizer.h"

#include <string_view>

namespace {

void tokenizeAll(const bertc::Tokenizer &tokenizer, std::string_view text) {
  try {
    for (const bertc::Token &token : tokenizer.tokenize(text))
      if (token.begin > token.end || token.end > text.size())
        __builtin_trap();
    (void)tokenizer.encode(text, 8);
    (void)tokenizer.encodePair(text, text.substr(text.size() / 2), 9);
  } catch (const bertc::TokenizerError &) {
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const bertc::Vocab sample = bertc::Vocab::load(bertc::fuzz::sampleVocabPath());
  static const bertc::Tokenizer cased(sample, false), uncased(sample, true);
  std::string_view text(reinterpret_cast<const char *>(data), size);
  tokenizeAll(cased, text);
  tokenizeAll(uncased, text);

  std::string path = bertc::fuzz::writeInputFile(data, size, "vocab.txt");
  try {
    bertc::Vocab vocab = bertc::Vocab::load(path);
    bertc::Tokenizer tokenizer(vocab, bertc::guessLowerCase(vocab));
    tokenizeAll(tokenizer, "The quick brown fox, un-affable caf\xc3\xa9 [SEP] \xe4\xb8\xad");
    tokenizeAll(tokenizer, text);
  } catch (const bertc::TokenizerError &) {
  }
  return 0;
}
