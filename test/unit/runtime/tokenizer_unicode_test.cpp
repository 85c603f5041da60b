// The tokenizer's Unicode against Hugging Face's tokenizers library, without the library:
// what becomes of every code point between two words, against the library's outcomes
// recorded in hf_code_point_outcomes.inc (test/tokenizer/every-code-point.test compares every
// token with the library itself where node has it), and the cases where the library's Unicode
// versions (scripts/gen_unicode_tables.py) part from Python's, which SQuAD's metric keeps.
#include "bertc/runtime/tokenizer.h"
#include "bertc/runtime/tokenizer_unicode.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <iomanip>
#include <sstream>

namespace bertc {
namespace {

using testing::ScratchDir;
using testing::writeText;

/// What becomes of c in "ab" + c + "cd" with the vocabulary [UNK] ab cd ##cd: it stays in the
/// word ([UNK] over it all), vanishes ([ab ##cd]: dropped, or a stripped mark), splits the
/// words ([ab cd]: white space) or is a word of its own ([ab c cd]: punctuation, a CJK
/// ideograph).
enum Outcome { kInWord, kGone, kSplit, kIsolated, kNoneOfThese };

struct CodePointOutcomes {
  char32_t first, last;
  Outcome cased, uncased;
};

#include "hf_code_point_outcomes.inc"

const char *outcomeName(Outcome outcome) {
  static const char *const kNames[] = {"in word", "gone", "split", "isolated", "none of these"};
  return kNames[outcome];
}

/// The outcome that the tokens of "ab" + c + "cd" show, c being `length` bytes.
Outcome outcomeOf(const std::vector<Token> &tokens, size_t length) {
  using Expected = std::vector<std::tuple<std::string, size_t, size_t>>;
  auto are = [&](const Expected &expected) {
    return tokens.size() == expected.size() &&
           std::equal(tokens.begin(), tokens.end(), expected.begin(), [](auto &token, auto &e) {
             return std::tie(token.text, token.begin, token.end) == e;
           });
  };
  size_t after = 2 + length;
  if (are({{"ab", 0, 2}, {"##cd", after, after + 2}}))
    return kGone;
  if (are({{"ab", 0, 2}, {"cd", after, after + 2}}))
    return kSplit;
  if (are({{"ab", 0, 2}, {"[UNK]", 2, after}, {"cd", after, after + 2}}))
    return kIsolated;
  if (are({{"[UNK]", 0, after + 2}}))
    return kInWord;
  return kNoneOfThese;
}

Vocab vocab(const ScratchDir &dir, const std::string &tokens) {
  writeText(dir.file("vocab.txt"), tokens);
  return Vocab::load(dir.file("vocab.txt"));
}

TEST(TokenizerUnicode, EveryCodePointBetweenWordsAsTheTokenizersLibrary) {
  ScratchDir dir;
  Vocab words = vocab(dir, "[PAD]\n[UNK]\n[CLS]\n[SEP]\nab\ncd\n##cd\n");
  Tokenizer cased(words, {.lowerCase = false}), uncased(words, {.lowerCase = true});
  const CodePointOutcomes *listed = std::begin(kHfCodePointOutcomes);
  size_t differ = 0;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF)
      continue;
    while (listed != std::end(kHfCodePointOutcomes) && listed->last < cp)
      ++listed;
    bool inTable = listed != std::end(kHfCodePointOutcomes) && listed->first <= cp;
    std::string c;
    unicode::appendUtf8(cp, c);
    std::string text = "ab" + c + "cd";
    Outcome casedWanted = inTable ? listed->cased : kInWord;
    Outcome uncasedWanted = inTable ? listed->uncased : kInWord;
    Outcome casedGot = outcomeOf(cased.tokenize(text), c.size());
    Outcome uncasedGot = outcomeOf(uncased.tokenize(text), c.size());
    if (casedGot == casedWanted && uncasedGot == uncasedWanted)
      continue;
    if (++differ <= 20) {
      std::ostringstream hex;
      hex << "U+" << std::uppercase << std::hex << std::setw(4) << std::setfill('0') << cp;
      ADD_FAILURE() << hex.str() << ": cased " << outcomeName(casedGot) << " (library "
                    << outcomeName(casedWanted) << "), uncased " << outcomeName(uncasedGot)
                    << " (library " << outcomeName(uncasedWanted) << ")";
    }
  }
  EXPECT_EQ(differ, 0u) << "code points whose outcome differs from the library's";
}

// Uncased, "A" U+1D165 U+16FF0 U+A7CB U+11938 U+1C89 normalizes as the library does it:
// U+16FF0 (Unicode 13, class 6) is a starter to its Unicode 9.0 NFD, so it does not move
// before U+1D165 (class 216); U+11938 (Unicode 13) does not decompose to U+11935 U+11930;
// and Rust's lower-casing (Unicode 17) maps U+A7CB to U+0264 and U+1C89 to U+1C8A, which
// Python 3.11's does not.
TEST(TokenizerUnicode, NormalizesWithTheLibrarysUnicodeVersions) {
  ScratchDir dir;
  std::string word = "a\U0001D165\U00016FF0\u0264\U00011938\u1C8A";
  Tokenizer uncased(vocab(dir, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n" + word + "\n"), {});
  std::string text = "A\U0001D165\U00016FF0\uA7CB\U00011938\u1C89";
  std::vector<Token> tokens = uncased.tokenize(text);
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].text, word);
  EXPECT_EQ(tokens[0].end, text.size());
  // SQuAD's normalize_answer keeps Python's lower-casing.
  EXPECT_EQ(unicode::lowerText(U"\uA7CB\u1C89"), U"\uA7CB\u1C89");
}

// Uncased, NFD puts U+1D165 (class 216) before U+1D16D (class 226), and each takes the span
// of the place it moves to, as the library's alignments go by position: ##𝅥 bytes 1-5 (where
// U+1D16D was), ##𝅭 bytes 5-9.
TEST(TokenizerUnicode, ReorderedMarksTakeTheSpansOfTheirPlaces) {
  ScratchDir dir;
  Tokenizer uncased(vocab(dir, "[PAD]\n[UNK]\n[CLS]\n[SEP]\na\n##\U0001D165\n##\U0001D16D\n"), {});
  std::vector<std::tuple<std::string, size_t, size_t>> tokens;
  for (const Token &token : uncased.tokenize("a\U0001D16D\U0001D165"))
    tokens.emplace_back(token.text, token.begin, token.end);
  EXPECT_EQ(tokens,
            (decltype(tokens){{"a", 0, 1}, {"##\U0001D165", 1, 5}, {"##\U0001D16D", 5, 9}}));
}

// Cased, the library's Unicode 8.0 categories: U+166D (Po then, So since Unicode 12) is
// punctuation, U+2E5D (a dash of Unicode 14) is not; uncased, U+1734 (Mn then, Mc since
// Unicode 14) is stripped and U+0898 (a mark of Unicode 14) stays.
TEST(TokenizerUnicode, ClassifiesWithTheLibrarysUnicodeVersions) {
  ScratchDir dir;
  Vocab words = vocab(dir, "[PAD]\n[UNK]\n[CLS]\n[SEP]\nx\n##y\ny\n\u166D\n");
  std::vector<std::string> texts;
  for (const Token &token : Tokenizer(words, {.lowerCase = false}).tokenize("x\u166Dy x\u2E5Dy"))
    texts.push_back(token.text);
  for (const Token &token : Tokenizer(words, {.lowerCase = true}).tokenize("x\u1734y x\u0898y"))
    texts.push_back(token.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"x", "\u166D", "y", "[UNK]", "x", "##y", "[UNK]"}));
}

} // namespace
} // namespace bertc
