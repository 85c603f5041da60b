// Fuzzes the WordPiece tokenizer, vocab.txt and tokenizer_config.json: the input is
// tokenized (alone, encoded, and as a pair) with the sample vocabulary, cased, uncased and
// lower-cased with accents and CJK kept; then it is read as a vocab.txt which, when valid,
// tokenizes a fixed text and the input, and as a tokenizer_config.json. Only
// TokenizerError may come out; every token's byte span must lie in its text.

#include "fuzz_files.h"

#include "bertc/runtime/tokenizer_config.h"

#include <filesystem>

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
  static const bertc::Tokenizer cased(sample, {false, std::nullopt, true}), uncased(sample, {}),
      keepAccents(sample, {true, false, false});
  std::string_view text(reinterpret_cast<const char *>(data), size);
  for (const bertc::Tokenizer *tokenizer : {&cased, &uncased, &keepAccents})
    tokenizeAll(*tokenizer, text);

  std::string path = bertc::fuzz::writeInputFile(data, size, "vocab.txt");
  try {
    bertc::Vocab vocab = bertc::Vocab::load(path);
    bertc::Tokenizer tokenizer(vocab, bertc::resolveTokenizerSettings(vocab, {}));
    tokenizeAll(tokenizer, "The quick brown fox, un-affable caf\xc3\xa9 [SEP] \xe4\xb8\xad");
    tokenizeAll(tokenizer, text);
  } catch (const bertc::TokenizerError &) {
  }
  // Beside the sample vocabulary, and removed after: the next input's vocab.txt must not
  // find it.
  std::string config = bertc::fuzz::writeInputFile(data, size, "tokenizer_config.json");
  try {
    (void)bertc::resolveTokenizerSettings(sample, {});
  } catch (const bertc::TokenizerError &) {
  }
  std::filesystem::remove(config);
  return 0;
}
