// bertc's tokens of each text of a JSONL file of strings with a tokenizer.json, which
// test/tokenizer/bpe-*.test compare with the tokenizers library's
// (test/reference/hf_tokenizers/bpe_compare.js). One output line per text:
// "id@begin-end ..." (offsets in code points, as the library's Node binding gives them),
// a tab, then the JSON string decode(ids) gives.
//   bertc_hf_tokenize_lines tokenizer.json texts.jsonl
#include "bertc/runtime/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: bertc_hf_tokenize_lines tokenizer.json texts.jsonl\n";
    return 2;
  }
  try {
    bertc::HfTokenizer tokenizer = bertc::loadHfTokenizer(argv[1]);
    std::ifstream texts(argv[2]);
    std::string line;
    while (std::getline(texts, line)) {
      std::string text = nlohmann::json::parse(line).get<std::string>();
      // Code points before each byte offset: a count of the non-continuation bytes.
      std::vector<size_t> codePointsBefore(text.size() + 1, 0);
      for (size_t i = 0; i < text.size(); ++i)
        codePointsBefore[i + 1] = codePointsBefore[i] + ((uint8_t(text[i]) & 0xC0) != 0x80);
      std::vector<int32_t> ids;
      std::string out;
      for (const bertc::Token &token : tokenizer.encode(text, false)) {
        ids.push_back(token.id);
        out += (out.empty() ? "" : " ") + std::to_string(token.id) + "@" +
               std::to_string(codePointsBefore[token.begin]) + "-" +
               std::to_string(codePointsBefore[token.end]);
      }
      std::cout << out << "\t" << nlohmann::json(tokenizer.decode(ids, false)).dump() << "\n";
    }
  } catch (const std::exception &error) {
    std::cerr << "bertc_hf_tokenize_lines: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
