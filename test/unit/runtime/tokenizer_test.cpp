// The WordPiece tokenizer against BertTokenizerFast's rules: every expected token list below
// was worked out by hand from the tokenizers library's BertNormalizer (clean, CJK spacing,
// NFD + drop Mn when stripping accents, per-character lower-casing, no NFC),
// BertPreTokenizer (whitespace and punctuation split) and WordPiece (greedy longest match),
// plus byte offsets, [CLS]/[SEP] framing, LongestFirst truncation and vocabulary errors.
#include "bertc/runtime/tokenizer.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

namespace bertc {
namespace {

using testing::errorOf;
using testing::ScratchDir;
using testing::writeText;

/// The vocabulary the tests tokenize with: special tokens, then words in both cases.
const std::vector<std::string> kTokens = {
    "[PAD]", "[UNK]",   "[CLS]", "[SEP]", "[MASK]", "[unused0]", "hello", "Hello", "world",
    "World", "##world", "héllo", "Héllo", ",",      "!",         "?",     ".",     "'",
    "-",     "(",       ")",     "[",     "]",      "$",         "^",     "`",     "«",
    "»",     "¿",       "—",     "un",    "##aff",  "##able",    "don",   "t",     "stop",
    "me",    "now",     "que",   "mask",  "a",      "##a",       "b",     "c",     "d",
    "é",     "##é",     "i",     "σασ",   "我",     "爱",        "nlp",   "N",     "##LP",
    "한",    "ᄒ",      "##ᅡ",   "##ᆫ",   "Ω",      "ω"};

std::string vocabFile(const ScratchDir &dir, const std::vector<std::string> &tokens) {
  std::string text;
  for (const std::string &token : tokens)
    text += token + "\n";
  writeText(dir.file("vocab.txt"), text);
  return dir.file("vocab.txt");
}

Tokenizer makeTokenizer(const ScratchDir &dir, TokenizerSettings settings) {
  return Tokenizer(Vocab::load(vocabFile(dir, kTokens)), settings);
}

/// Uncased (lower-case, strip accents) or cased, the other settings at their defaults.
Tokenizer makeTokenizer(const ScratchDir &dir, bool lowerCase) {
  TokenizerSettings settings;
  settings.lowerCase = lowerCase;
  return makeTokenizer(dir, settings);
}

std::vector<std::string> texts(const std::vector<Token> &tokens) {
  std::vector<std::string> out;
  for (const Token &token : tokens)
    out.push_back(token.text);
  return out;
}

using Strings = std::vector<std::string>;

TEST(BasicTokenizer, SplitsPunctuationOffWords) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir, true);
  EXPECT_EQ(texts(tokenizer.tokenize("don't stop-me (now)...")),
            (Strings{"don", "'", "t", "stop", "-", "me", "(", "now", ")", ".", ".", "."}));
  // ASCII symbols count as punctuation ($ is Sc, ^ and ` are Sk) ...
  EXPECT_EQ(texts(tokenizer.tokenize("a$b^c`d")), (Strings{"a", "$", "b", "^", "c", "`", "d"}));
  // ... and outside ASCII only P*: « » ¿ — split, the math sign ± (Sm) does not, so
  // "a±a" stays one word, which no vocabulary entry continues after "a".
  EXPECT_EQ(texts(tokenizer.tokenize("«hello»—¿que? a±a")),
            (Strings{"«", "hello", "»", "—", "¿", "que", "?", "[UNK]"}));
}

TEST(BasicTokenizer, HelloWorldUncasedAndCased) {
  ScratchDir dir;
  EXPECT_EQ(texts(makeTokenizer(dir, true).tokenize("Hello, World!")),
            (Strings{"hello", ",", "world", "!"}));
  EXPECT_EQ(texts(makeTokenizer(dir, false).tokenize("Hello, World!")),
            (Strings{"Hello", ",", "World", "!"}));
}

TEST(BasicTokenizer, StripsAccentsOnlyWhenLowerCasing) {
  ScratchDir dir;
  Tokenizer uncased = makeTokenizer(dir, true), cased = makeTokenizer(dir, false);
  EXPECT_EQ(texts(uncased.tokenize("Héllo")), (Strings{"hello"}));
  EXPECT_EQ(texts(cased.tokenize("Héllo")), (Strings{"Héllo"}));
  // A decomposed é (e + U+0301): uncased loses the accent (NFD, then Mn dropped).
  EXPECT_EQ(texts(uncased.tokenize("HE\u0301LLO")), (Strings{"hello"}));
}

// The fast tokenizer composes nothing: cased, "He" + U+0301 + "llo" (7 bytes) is not the
// vocabulary's precomposed "Héllo", and no entry prefixes it, so it is one [UNK]; the ohm
// sign U+2126 is not the Greek Ω (U+03A9) it canonically decomposes to. Uncased, NFD maps
// U+2126 to Ω, lower-cased to ω.
TEST(BasicTokenizer, CasedTextIsNotComposed) {
  ScratchDir dir;
  Tokenizer uncased = makeTokenizer(dir, true), cased = makeTokenizer(dir, false);
  std::vector<Token> decomposed = cased.tokenize("He\u0301llo");
  EXPECT_EQ(texts(decomposed), (Strings{"[UNK]"}));
  EXPECT_EQ(decomposed[0].end, 7u);
  EXPECT_EQ(texts(cased.tokenize("\u2126 \u03A9")), (Strings{"[UNK]", "Ω"}));
  EXPECT_EQ(texts(uncased.tokenize("\u2126")), (Strings{"ω"}));
}

// strip_accents defaults to do_lower_case and can be set apart from it; with
// tokenize_chinese_chars off, "我爱NLP" is one word "我爱nlp": WordPiece takes "我" and
// finds no "##爱...", so the word is [UNK].
TEST(BasicTokenizer, EachSettingActsAlone) {
  ScratchDir dir;
  TokenizerSettings lowerKeepAccents, stripAccentsKeepCase, noChinese;
  lowerKeepAccents.stripAccents = false;
  stripAccentsKeepCase.lowerCase = false;
  stripAccentsKeepCase.stripAccents = true;
  noChinese.chineseChars = false;
  EXPECT_EQ(texts(makeTokenizer(dir, lowerKeepAccents).tokenize("Héllo")), (Strings{"héllo"}));
  EXPECT_EQ(texts(makeTokenizer(dir, stripAccentsKeepCase).tokenize("Héllo")), (Strings{"Hello"}));
  EXPECT_EQ(texts(makeTokenizer(dir, noChinese).tokenize("我爱NLP")), (Strings{"[UNK]"}));
  EXPECT_EQ(lowerKeepAccents.describe(), "uncased, accents kept");
  EXPECT_EQ(stripAccentsKeepCase.describe(), "cased, accents stripped");
  EXPECT_EQ(noChinese.describe(), "uncased, CJK not split");
  EXPECT_EQ(TokenizerSettings{}.describe(), "uncased");
}

TEST(BasicTokenizer, LowerCasesEachCharacterAlone) {
  ScratchDir dir;
  Tokenizer uncased = makeTokenizer(dir, true);
  // İ lower-cases to i + U+0307, whose dot goes with the accents.
  EXPECT_EQ(texts(uncased.tokenize("İ")), (Strings{"i"}));
  // Lowercase maps each character alone (Rust's char::to_lowercase): no final sigma (ς).
  EXPECT_EQ(texts(uncased.tokenize("ΣΑΣ")), (Strings{"σασ"}));
}

TEST(BasicTokenizer, SpacesOutChineseCharacters) {
  ScratchDir dir;
  std::vector<Token> uncased = makeTokenizer(dir, true).tokenize("我爱NLP");
  EXPECT_EQ(texts(uncased), (Strings{"我", "爱", "nlp"}));
  EXPECT_EQ(uncased[1].begin, 3u);
  EXPECT_EQ(uncased[2].begin, 6u);
  EXPECT_EQ(uncased[2].end, 9u);
  EXPECT_EQ(texts(makeTokenizer(dir, false).tokenize("我爱NLP")),
            (Strings{"我", "爱", "N", "##LP"}));
  // Kana are not in _is_chinese_char's ranges: "あい" stays one (unknown) word.
  EXPECT_EQ(texts(makeTokenizer(dir, true).tokenize("我あい")), (Strings{"我", "[UNK]"}));
  // The tokenizers library's range of CJK Extension E starts at U+2B920, not U+2B820.
  EXPECT_EQ(texts(makeTokenizer(dir, true).tokenize("\U0002B920hello")),
            (Strings{"[UNK]", "hello"}));
  EXPECT_EQ(texts(makeTokenizer(dir, true).tokenize("\U0002B91Fhello")), (Strings{"[UNK]"}));
  EXPECT_EQ(texts(makeTokenizer(dir, true).tokenize("\U0002B820hello")), (Strings{"[UNK]"}));
}

TEST(BasicTokenizer, DropsControlCharactersAndSplitsOnAnyWhitespace) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir, true);
  // NUL, zero-width space (Cf), soft hyphen (Cf) and U+FFFD vanish without splitting.
  using namespace std::string_literals;
  EXPECT_EQ(texts(tokenizer.tokenize("hel\u200Blo\0 wor\u00ADld hel\uFFFDlo"s)),
            (Strings{"hello", "world", "hello"}));
  // An unassigned code point (Cn) is no control character: it stays, and its word is unknown.
  EXPECT_EQ(texts(tokenizer.tokenize("hello \u0378 world hel\u0378lo")),
            (Strings{"hello", "[UNK]", "world", "[UNK]"}));
  // NEL (U+0085) is a control character to BERT, not whitespace.
  EXPECT_EQ(texts(tokenizer.tokenize("hello\u0085world")), (Strings{"hello", "##world"}));
  // No-break space, ideographic space, tab, CR LF and the line separator all split.
  EXPECT_EQ(texts(tokenizer.tokenize("hello\u00A0world\u3000hello\tworld\r\nhello\u2028world")),
            (Strings{"hello", "world", "hello", "world", "hello", "world"}));
  EXPECT_TRUE(tokenizer.tokenize(" \t\r\n\u00A0").empty());
}

TEST(Wordpiece, SplitsUnaffableGreedily) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir, true);
  std::vector<Token> tokens = tokenizer.tokenize("unaffable");
  EXPECT_EQ(texts(tokens), (Strings{"un", "##aff", "##able"}));
  EXPECT_EQ(tokens[0].id, 30);
  EXPECT_EQ(tokens[1].begin, 2u);
  EXPECT_EQ(tokens[1].end, 5u);
  EXPECT_EQ(tokens[2].begin, 5u);
  EXPECT_EQ(tokens[2].end, 9u);
}

TEST(Wordpiece, UnmatchedWordIsOneUnknown) {
  ScratchDir dir;
  // "unaffable" matches up to "x", which no "##" entry starts: the whole word is [UNK].
  std::vector<Token> tokens = makeTokenizer(dir, true).tokenize("unaffablex hello");
  EXPECT_EQ(texts(tokens), (Strings{"[UNK]", "hello"}));
  EXPECT_EQ(tokens[0].id, 1);
  EXPECT_EQ(tokens[0].begin, 0u);
  EXPECT_EQ(tokens[0].end, 10u);
}

TEST(Wordpiece, WordOverHundredCharactersIsUnknown) {
  ScratchDir dir;
  Tokenizer uncased = makeTokenizer(dir, true), cased = makeTokenizer(dir, false);
  std::vector<Token> hundred = uncased.tokenize(std::string(100, 'a'));
  ASSERT_EQ(hundred.size(), 100u);
  EXPECT_EQ(hundred.front().text, "a");
  EXPECT_EQ(hundred.back().text, "##a");
  std::vector<Token> longer = uncased.tokenize(std::string(101, 'a') + " a");
  EXPECT_EQ(texts(longer), (Strings{"[UNK]", "a"}));
  EXPECT_EQ(longer[0].end, 101u);
  // The limit counts characters, not bytes: 100 é (200 bytes) still split.
  std::string accents;
  for (int i = 0; i < 100; ++i)
    accents += "é";
  EXPECT_EQ(cased.tokenize(accents).size(), 100u);
  EXPECT_EQ(texts(cased.tokenize(accents + "é")), (Strings{"[UNK]"}));
}

TEST(Tokenizer, KeepsSpecialTokensWhole) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir, true);
  std::string text = "[CLS] Hello[MASK]world [SEP] [mask]";
  std::vector<Token> tokens = tokenizer.tokenize(text);
  // Special tokens are found anywhere, never lower-cased; "[mask]" is ordinary text.
  EXPECT_EQ(texts(tokens),
            (Strings{"[CLS]", "hello", "[MASK]", "world", "[SEP]", "[", "mask", "]"}));
  EXPECT_EQ(tokens[2].id, 4);
  EXPECT_EQ(text.substr(tokens[2].begin, tokens[2].end - tokens[2].begin), "[MASK]");
  EXPECT_EQ(texts(makeTokenizer(dir, false).tokenize("[PAD][UNK]")), (Strings{"[PAD]", "[UNK]"}));
}

TEST(Tokenizer, OffsetsPointBackIntoTheText) {
  ScratchDir dir;
  std::string text = "Hello, World! Héllo 我爱NLP (don't) unaffable";
  std::vector<Token> tokens = makeTokenizer(dir, false).tokenize(text);
  ASSERT_EQ(tokens.size(), 17u);
  for (const Token &token : tokens) {
    std::string source = text.substr(token.begin, token.end - token.begin);
    bool continuation = token.text.rfind("##", 0) == 0;
    EXPECT_EQ(source, continuation ? token.text.substr(2) : token.text) << token.text;
  }
  // Uncased tokens point at the text as written.
  std::vector<Token> uncased = makeTokenizer(dir, true).tokenize(text);
  EXPECT_EQ(uncased[4].text, "hello");
  EXPECT_EQ(text.substr(uncased[4].begin, uncased[4].end - uncased[4].begin), "Héllo");
}

TEST(Tokenizer, PiecesOfOneCharacterShareItsSpan) {
  ScratchDir dir;
  // Uncased, 한 decomposes to three jamo (NFD); cased text keeps the syllable.
  std::vector<Token> jamo = makeTokenizer(dir, true).tokenize("x 한");
  EXPECT_EQ(texts(jamo), (Strings{"[UNK]", "ᄒ", "##ᅡ", "##ᆫ"}));
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(jamo[i].begin, 2u);
    EXPECT_EQ(jamo[i].end, 5u);
  }
  EXPECT_EQ(texts(makeTokenizer(dir, false).tokenize("한")), (Strings{"한"}));
}

TEST(Tokenizer, RejectsInvalidUtf8) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir, true);
  EXPECT_EQ(errorOf([&] {
              tokenizer.tokenize("ab\xff"
                                 "cd");
            }),
            "invalid UTF-8 at byte 2 of the text");
  EXPECT_EQ(errorOf([&] { tokenizer.tokenize("a \xc0\xaf"); }), // overlong "/"
            "invalid UTF-8 at byte 2 of the text");
  EXPECT_EQ(errorOf([&] { tokenizer.tokenize("[CLS]\xed\xa0\x80"); }), // a surrogate
            "invalid UTF-8 at byte 5 of the text");
  EXPECT_EQ(errorOf([&] { tokenizer.tokenize("hello \xe6\x88"); }), // cut short
            "invalid UTF-8 at byte 6 of the text");
}

TEST(Tokenizer, EncodeFramesAndTruncates) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir, true);
  Encoding full = tokenizer.encode("hello world!", 16);
  EXPECT_EQ(full.inputIds, (std::vector<int32_t>{2, 6, 8, 14, 3}));
  EXPECT_EQ(full.tokenTypeIds, (std::vector<int32_t>(5, 0)));
  EXPECT_EQ(full.tokens[0].end, 0u);
  EXPECT_FALSE(full.truncated);
  Encoding cut = tokenizer.encode("hello world!", 3);
  EXPECT_EQ(cut.inputIds, (std::vector<int32_t>{2, 6, 3}));
  EXPECT_TRUE(cut.truncated);
  EXPECT_FALSE(tokenizer.encode("hello world!", 5).truncated); // exactly fits
  EXPECT_EQ(tokenizer.encode("hello", 2).inputIds, (std::vector<int32_t>{2, 3}));
  EXPECT_THROW(tokenizer.encode("hello", 1), std::invalid_argument);
}

TEST(Tokenizer, EncodePairTruncatesLongestFirst) {
  ScratchDir dir;
  Tokenizer tokenizer = makeTokenizer(dir, true);
  auto lengths = [&](const char *a, const char *b, size_t maxLen) {
    Encoding pair = tokenizer.encodePair(a, b, maxLen);
    size_t first = 0, second = 0;
    for (size_t i = 0; i < pair.inputIds.size(); ++i) {
      bool special = pair.inputIds[i] == 2 || pair.inputIds[i] == 3;
      if (!special)
        ++(pair.tokenTypeIds[i] == 0 ? first : second);
    }
    return std::make_pair(first, second);
  };
  // 5 + 2 tokens (+ 3 special) in 8 leave room 5: the shorter second keeps its 2 (at most
  // half), the first gets the other 3.
  EXPECT_EQ(lengths("a b c d a", "b c", 8), std::make_pair(size_t(3), size_t(2)));
  // 4 + 4 in room 5: half each, the odd token to the second on a tie.
  EXPECT_EQ(lengths("a b c d", "a b c d", 8), std::make_pair(size_t(2), size_t(3)));
  // 2 + 6 in room 6: the second loses two, to 4.
  EXPECT_EQ(lengths("a b", "a b c d a b", 9), std::make_pair(size_t(2), size_t(4)));
  EXPECT_EQ(lengths("a b", "c", 100), std::make_pair(size_t(2), size_t(1)));
  EXPECT_EQ(lengths("a b", "c", 3), std::make_pair(size_t(0), size_t(0)));
  EXPECT_TRUE(tokenizer.encodePair("a b", "c", 5).truncated);
  EXPECT_FALSE(tokenizer.encodePair("a b", "c", 6).truncated); // exactly fits
  EXPECT_THROW(tokenizer.encodePair("a", "b", 2), std::invalid_argument);

  Encoding pair = tokenizer.encodePair("hello", "a world", 16);
  EXPECT_EQ(pair.inputIds, (std::vector<int32_t>{2, 6, 3, 40, 8, 3}));
  EXPECT_EQ(pair.tokenTypeIds, (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(pair.tokens[4].begin, 2u); // offsets of the second text are into it
  EXPECT_EQ(pair.tokens[4].end, 7u);
}

// LongestFirst's lengths, worked from truncate_encodings (n1 the shorter, max the room):
// n2 = max(n1, max - n1); if n1 + n2 > max, n1 = max / 2 and n2 = n1 + max % 2.
TEST(Tokenizer, PairLengthsAreLongestFirst) {
  using Lengths = std::pair<size_t, size_t>;
  EXPECT_EQ(pairLengths(5, 5, 100), Lengths(5, 5)); // fits
  // 10 and 8 in 15: n1 = 8, n2 = max(8, 7) = 8, 16 > 15: 7 and 8, the 8 to the longer first.
  EXPECT_EQ(pairLengths(10, 8, 15), Lengths(8, 7));
  // 8 and 8 in 15: a tie gives the odd token to the second.
  EXPECT_EQ(pairLengths(8, 8, 15), Lengths(7, 8));
  EXPECT_EQ(pairLengths(9, 9, 17), Lengths(8, 9));
  // 12 and 3 in 10: n1 = 3 fits in half, the longer takes 10 - 3 = 7.
  EXPECT_EQ(pairLengths(12, 3, 10), Lengths(7, 3));
  EXPECT_EQ(pairLengths(3, 12, 10), Lengths(3, 7));
  // 2 and 10 in 3: n2 = max(2, 1) = 2, 4 > 3: the shorter is cut too, to 1; the longer 2.
  EXPECT_EQ(pairLengths(2, 10, 3), Lengths(1, 2));
  EXPECT_EQ(pairLengths(2, 1, 0), Lengths(0, 0));
}

TEST(Vocab, IdsAreLineIndices) {
  ScratchDir dir;
  writeText(dir.file("crlf.txt"), "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nhello\r\n");
  Vocab vocab = Vocab::load(dir.file("crlf.txt"));
  EXPECT_EQ(vocab.size(), 5u);
  EXPECT_EQ(vocab.find("hello"), 4);
  EXPECT_EQ(vocab.token(2), "[CLS]");
  EXPECT_FALSE(vocab.find("world"));
  Tokenizer tokenizer(std::move(vocab), TokenizerSettings{});
  EXPECT_EQ(tokenizer.clsId(), 2);
  EXPECT_EQ(tokenizer.sepId(), 3);
  EXPECT_EQ(tokenizer.padId(), 0);
  EXPECT_EQ(tokenizer.unkId(), 1);
  // Without [MASK] in the vocabulary, "[MASK]" is ordinary text.
  EXPECT_EQ(texts(tokenizer.tokenize("[MASK]")), (Strings{"[UNK]", "[UNK]", "[UNK]"}));
}

TEST(Vocab, ErrorsNameTheFile) {
  ScratchDir dir;
  std::string missing = dir.file("missing.txt");
  EXPECT_EQ(errorOf([&] { Vocab::load(missing); }),
            missing + ": cannot open: No such file or directory");
  // Only a regular file is read, and only up to the vocabulary's limit.
  EXPECT_EQ(errorOf([&] { Vocab::load("/dev/zero"); }),
            "/dev/zero: is a character device, not a regular file");
  writeText(dir.file("huge.txt"), "");
  std::filesystem::resize_file(dir.file("huge.txt"), (uint64_t(64) << 20) + 1);
  EXPECT_EQ(errorOf([&] { Vocab::load(dir.file("huge.txt")); }),
            dir.file("huge.txt") + ": larger than 64 MiB, the limit for a vocabulary");
  writeText(dir.file("empty.txt"), "");
  EXPECT_EQ(errorOf([&] { Vocab::load(dir.file("empty.txt")); }),
            dir.file("empty.txt") + ": the vocabulary is empty");
  writeText(dir.file("twice.txt"), "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\nhello\n");
  EXPECT_EQ(errorOf([&] { Vocab::load(dir.file("twice.txt")); }),
            dir.file("twice.txt") + ":7: token 'hello' is listed twice (first on line 5)");
  writeText(dir.file("lacking.txt"), "[PAD]\n[UNK]\nhello\n");
  EXPECT_EQ(errorOf([&] { Vocab::load(dir.file("lacking.txt")); }),
            dir.file("lacking.txt") + ": the vocabulary lacks [CLS], [SEP]");
  EXPECT_THROW(Vocab::load(dir.file("lacking.txt")), TokenizerError);
}

TEST(Vocab, GuessesLowerCasingFromTheTokens) {
  ScratchDir dir;
  Strings uncased = {"[PAD]", "[UNK]", "[CLS]",  "[SEP]", "[MASK]", "[unused0]",
                     "hello", "##ß",   "straße", "σας",   "我",     "!"};
  EXPECT_TRUE(guessLowerCase(Vocab::load(vocabFile(dir, uncased))));
  for (const char *upper : {"Hello", "##É", "Σ"}) {
    Strings cased = uncased;
    cased.push_back(upper);
    EXPECT_FALSE(guessLowerCase(Vocab::load(vocabFile(dir, cased)))) << upper;
  }
}

} // namespace
} // namespace bertc
