// bertc_tokenize_code_points VOCAB: bertc's tokens of "ab" + c + "cd" for every code point c
// (surrogates skipped), cased and uncased, one line per code point, HEX \t CASED \t UNCASED,
// each setting its tokens as "id@begin-end" (offsets in code points) joined by spaces: what
// test/reference/hf_tokenizers/code_points.js compares with the tokenizers library's.
#include "bertc/runtime/tokenizer.h"
#include "bertc/runtime/unicode_text.h"

#include <cstdio>
#include <string>

namespace {

/// The tokens of `text` ("ab" + c + "cd", c `length` bytes) with byte offsets turned into
/// code point offsets: every offset is a character boundary, 0, 1, 2 or after c.
std::string tokenLine(const bertc::Tokenizer &tokenizer, const std::string &text, size_t length) {
  auto codePointOffset = [&](size_t byte) { return byte <= 2 ? byte : byte - length + 1; };
  std::string line;
  for (const bertc::Token &token : tokenizer.tokenize(text)) {
    line += line.empty() ? "" : " ";
    line += std::to_string(token.id) + "@" + std::to_string(codePointOffset(token.begin)) + "-" +
            std::to_string(codePointOffset(token.end));
  }
  return line;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bertc_tokenize_code_points VOCAB\n");
    return 2;
  }
  try {
    bertc::Vocab vocab = bertc::Vocab::load(argv[1]);
    bertc::Tokenizer cased(vocab, {.lowerCase = false});
    bertc::Tokenizer uncased(std::move(vocab), {.lowerCase = true});
    for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF)
        continue;
      std::string c;
      bertc::unicode::appendUtf8(cp, c);
      std::string text = "ab" + c + "cd";
      std::printf("%X\t%s\t%s\n", unsigned(cp), tokenLine(cased, text, c.size()).c_str(),
                  tokenLine(uncased, text, c.size()).c_str());
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "bertc_tokenize_code_points: %s\n", error.what());
    return 1;
  }
  return 0;
}
