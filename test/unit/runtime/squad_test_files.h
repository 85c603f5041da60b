// The SQuAD tests' shared parts: a vocabulary for their questions and contexts, a one-
// paragraph file about the Eiffel Tower, and loading a file or its error.
#pragma once

#include "bertc/runtime/squad_data.h"

#include "scratch_dir.h"

#include <string>
#include <vector>

namespace bertc::squad_test {

using testing::errorOf;
using testing::ScratchDir;
using testing::writeText;

/// An uncased vocabulary for the questions and contexts below.
inline const char *const kVocab[] = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    // punctuation
    "?", ".", ",", ";", "!", "$", "-", "'", "(", ")", "«", "»", "—",
    // English
    "the", "eiffel", "tower", "is", "in", "paris", "where", "who", "built", "when", "was",
    "released", "how", "much", "did", "it", "earn", "earned", "zoe", "sal", "##dana", "starred",
    "avatar", "2009", "directed", "by", "james", "cameron", "2", "9", "bill", "##ion",
    // French
    "le", "cafe", "de", "flore", "a", "est", "celebre", "il", "ouvert", "en", "18", "##87", "ou",
    "quand", "t", "quel", "comment", "jean", "paul", "sartre", "y", "ecrivait", "simone",
    "beauvoir", "aussi", "qui", "d", "autre",
    // the windowing test
    "b", "c", "e", "f", "g", "h", "i", "j", "q", "r", "s"};

inline Tokenizer makeTokenizer(const ScratchDir &dir) {
  std::string text;
  for (const char *token : kVocab)
    text += std::string(token) + "\n";
  writeText(dir.file("vocab.txt"), text);
  return Tokenizer(Vocab::load(dir.file("vocab.txt")), TokenizerSettings{});
}

/// Writes `json` as dev.json and loads it.
inline SquadDataset load(const ScratchDir &dir, const std::string &json) {
  writeText(dir.file("dev.json"), json);
  return loadSquadDataset(dir.file("dev.json"));
}

/// The error loading `json` gives, with the scratch path shortened to "dev.json".
inline std::string loadError(const std::string &json) {
  ScratchDir dir;
  std::string error = errorOf([&] { load(dir, json); });
  std::string path = dir.file("dev.json");
  return error.rfind(path, 0) == 0 ? "dev.json" + error.substr(path.size()) : error;
}

/// A one-paragraph file about the Eiffel Tower (29 characters) with `qas`.
inline std::string towerFile(const std::string &qas) {
  return R"({"version": "1.1", "data": [{"title": "Eiffel_Tower", "paragraphs": [
      {"context": "The Eiffel Tower is in Paris.", "qas": )" +
         qas + "}]}]}";
}

inline const char *const kWhere = R"("id": "q1", "question": "Where is the Eiffel Tower?")";

/// towerFile with one question, "Where is the Eiffel Tower?", answered "Paris".
inline std::string whereIsTheTowerFile() {
  return towerFile(std::string("[{") + kWhere +
                   R"(, "answers": [{"text": "Paris", "answer_start": 23}]}])");
}

/// Token strings of inputIds.
inline std::vector<std::string> tokensOf(const Tokenizer &tokenizer,
                                         const std::vector<int32_t> &ids) {
  std::vector<std::string> out;
  for (int32_t id : ids)
    out.push_back(tokenizer.vocab().token(id));
  return out;
}

using Strings = std::vector<std::string>;

} // namespace bertc::squad_test
