// BertTokenizer in C++: special tokens split out, HF's BasicTokenizer steps (over the
// Unicode of unicode_text.h), WordPiece, and the [CLS]/[SEP] framing with longest-first
// truncation. Each character carries the byte span of the original character it came from
// through every step.
#include "bertc/runtime/tokenizer.h"

#include "input_files.h"
#include "unicode_text.h"

#include <algorithm>

namespace bertc {
namespace {

using namespace unicode;

/// WordPiece's max_input_chars_per_word: longer words become [UNK].
constexpr size_t kMaxWordChars = 100;

/// Token over chars [first, last): the union of their spans.
Token spanToken(std::string text, int32_t id, const Char *first, const Char *last) {
  Token token{std::move(text), id, first->begin, first->end};
  for (const Char *c = first; c != last; ++c) {
    token.begin = std::min(token.begin, c->begin);
    token.end = std::max(token.end, c->end);
  }
  return token;
}

/// WordPiece on one word: repeatedly take the longest vocabulary entry that prefixes the
/// rest of the word ("##"-prefixed after the first piece); a word with a rest that no entry
/// prefixes, or longer than kMaxWordChars characters, is one [UNK].
void appendWordPieces(const Vocab &vocab, int32_t unkId, const Char *chars, size_t count,
                      std::vector<Token> &out) {
  if (count > kMaxWordChars) {
    out.push_back(spanToken("[UNK]", unkId, chars, chars + count));
    return;
  }
  std::string word;
  std::vector<size_t> charStart; // byte offset in word of each character, then word.size()
  for (size_t i = 0; i < count; ++i) {
    charStart.push_back(word.size());
    appendUtf8(chars[i].codePoint, word);
  }
  charStart.push_back(word.size());

  size_t firstPiece = out.size();
  std::string candidate;
  for (size_t start = 0; start < count;) {
    std::optional<int32_t> id;
    size_t end = count;
    for (; end > start; --end) {
      candidate = start > 0 ? "##" : "";
      candidate.append(word, charStart[start], charStart[end] - charStart[start]);
      if ((id = vocab.find(candidate)))
        break;
    }
    if (!id) {
      out.resize(firstPiece, Token{});
      out.push_back(spanToken("[UNK]", unkId, chars, chars + count));
      return;
    }
    out.push_back(spanToken(candidate, *id, chars + start, chars + end));
    start = end;
  }
}

/// [CLS] first [SEP] (type 0), then second [SEP] (type 1) when there is a second text.
Encoding frame(int32_t clsId, int32_t sepId, std::vector<Token> first,
               std::optional<std::vector<Token>> second) {
  Encoding encoding;
  auto add = [&](Token token, int32_t type) {
    encoding.inputIds.push_back(token.id);
    encoding.tokenTypeIds.push_back(type);
    encoding.tokens.push_back(std::move(token));
  };
  add({"[CLS]", clsId, 0, 0}, 0);
  for (Token &token : first)
    add(std::move(token), 0);
  add({"[SEP]", sepId, 0, 0}, 0);
  if (second) {
    for (Token &token : *second)
      add(std::move(token), 1);
    add({"[SEP]", sepId, 0, 0}, 1);
  }
  return encoding;
}

} // namespace

Vocab Vocab::load(const std::string &path) {
  std::string text = readWholeFile<TokenizerError>(path, kVocabFileLimit);
  Vocab vocab;
  vocab.path_ = path;
  forEachLine(text, [&](int64_t lineNumber, std::string_view content) {
    std::string line(content);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    auto [entry, added] = vocab.ids_.emplace(line, int32_t(vocab.tokens_.size()));
    if (!added)
      throw TokenizerError(path + ":" + std::to_string(lineNumber) + ": token '" + line +
                           "' is listed twice (first on line " + std::to_string(entry->second + 1) +
                           ")");
    vocab.tokens_.push_back(line);
  });
  if (vocab.tokens_.empty())
    throw TokenizerError(path + ": the vocabulary is empty");
  std::string missing;
  for (const char *required : {"[UNK]", "[CLS]", "[SEP]", "[PAD]"})
    if (!vocab.find(required))
      missing += std::string(missing.empty() ? "" : ", ") + required;
  if (!missing.empty())
    throw TokenizerError(path + ": the vocabulary lacks " + missing);
  return vocab;
}

std::optional<int32_t> Vocab::find(const std::string &token) const {
  auto found = ids_.find(token);
  return found == ids_.end() ? std::nullopt : std::optional<int32_t>(found->second);
}

bool guessLowerCase(const Vocab &vocab) {
  std::vector<Char> chars, lowered;
  for (size_t id = 0; id < vocab.size(); ++id) {
    const std::string &token = vocab.token(int32_t(id));
    if (token.size() >= 2 && token.front() == '[' && token.back() == ']')
      continue;
    chars.clear();
    if (decodeUtf8(token, 0, chars) != SIZE_MAX)
      continue; // not text: says nothing about case
    for (const Char &c : chars) {
      lowered.clear();
      appendLower(c, lowered);
      if (lowered.size() != 1 || lowered[0].codePoint != c.codePoint)
        return false;
    }
  }
  return true;
}

Tokenizer::Tokenizer(Vocab vocab, bool lowerCase)
    : vocab_(std::move(vocab)), lowerCase_(lowerCase), clsId_(*vocab_.find("[CLS]")),
      sepId_(*vocab_.find("[SEP]")), padId_(*vocab_.find("[PAD]")), unkId_(*vocab_.find("[UNK]")) {
  for (const char *name : {"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"})
    if (std::optional<int32_t> id = vocab_.find(name))
      specials_.emplace_back(name, *id);
}

/// HF's PreTrainedTokenizer.tokenize splits special tokens out of the text first (they are
/// never lower-cased or split), then runs BertTokenizer on each piece between them.
std::vector<Token> Tokenizer::tokenize(std::string_view text) const {
  std::vector<Token> out;
  size_t segmentStart = 0;
  for (size_t at = 0; (at = text.find('[', at)) != std::string_view::npos;) {
    auto special = std::find_if(specials_.begin(), specials_.end(), [&](const auto &s) {
      return text.compare(at, s.first.size(), s.first) == 0;
    });
    if (special == specials_.end()) {
      ++at;
      continue;
    }
    tokenizeSegment(text.substr(segmentStart, at - segmentStart), segmentStart, out);
    out.push_back({special->first, special->second, at, at + special->first.size()});
    at = segmentStart = at + special->first.size();
  }
  tokenizeSegment(text.substr(segmentStart), segmentStart, out);
  return out;
}

/// BasicTokenizer, then WordPiece per word:
///  1. uncased: lower-case each character alone (PreTrainedTokenizer.tokenize does so before
///     BertTokenizer, which is why "Σ" never becomes the final "ς");
///  2. drop NUL, U+FFFD and control/format/unassigned characters, turn whitespace into
///     spaces, put spaces around CJK ideographs;
///  3. uncased: NFD and drop non-spacing marks (accents); cased: NFC;
///  4. split on spaces, and around each punctuation character;
///  5. WordPiece each word.
void Tokenizer::tokenizeSegment(std::string_view text, size_t base, std::vector<Token> &out) const {
  std::vector<Char> decoded, lowered, cleaned;
  if (size_t bad = decodeUtf8(text, base, decoded); bad != SIZE_MAX)
    throw TokenizerError("invalid UTF-8 at byte " + std::to_string(base + bad) + " of the text");
  if (lowerCase_) {
    for (const Char &c : decoded)
      appendLower(c, lowered);
    decoded.swap(lowered);
  }
  for (const Char &c : decoded) {
    CharClass kind = charClass(c.codePoint);
    if (kind == kDrop)
      continue;
    bool alone = kind == kSpace || !isChineseChar(c.codePoint);
    if (!alone)
      cleaned.push_back({U' ', c.begin, c.begin});
    cleaned.push_back({kind == kSpace ? U' ' : c.codePoint, c.begin, c.end});
    if (!alone)
      cleaned.push_back({U' ', c.end, c.end});
  }
  std::vector<Char> normalized;
  if (lowerCase_) {
    for (const Char &c : decomposeCanonical(cleaned))
      if (charClass(c.codePoint) != kMark)
        normalized.push_back(c);
  } else {
    normalized = composeCanonical(cleaned);
  }

  size_t wordStart = 0;
  auto endWord = [&](size_t at) {
    if (at > wordStart)
      appendWordPieces(vocab_, unkId_, normalized.data() + wordStart, at - wordStart, out);
  };
  for (size_t i = 0; i < normalized.size(); ++i) {
    CharClass kind = charClass(normalized[i].codePoint);
    if (kind == kSpace || kind == kPunct) {
      endWord(i);
      if (kind == kPunct)
        appendWordPieces(vocab_, unkId_, &normalized[i], 1, out);
      wordStart = i + 1;
    }
  }
  endWord(normalized.size());
}

Encoding Tokenizer::encode(std::string_view text, size_t maxLen) const {
  if (maxLen < 2)
    throw std::invalid_argument("encode: maxLen " + std::to_string(maxLen) +
                                " leaves no room for [CLS] and [SEP]");
  std::vector<Token> tokens = tokenize(text);
  bool truncated = tokens.size() > maxLen - 2;
  tokens.resize(std::min(tokens.size(), maxLen - 2), Token{});
  Encoding encoding = frame(clsId_, sepId_, std::move(tokens), {});
  encoding.truncated = truncated;
  return encoding;
}

Encoding Tokenizer::encodePair(std::string_view a, std::string_view b, size_t maxLen) const {
  if (maxLen < 3)
    throw std::invalid_argument("encodePair: maxLen " + std::to_string(maxLen) +
                                " leaves no room for [CLS] and two [SEP]");
  std::vector<Token> first = tokenize(a), second = tokenize(b);
  bool truncated = first.size() + second.size() + 3 > maxLen;
  while (first.size() + second.size() + 3 > maxLen) {
    if (first.size() > second.size())
      first.pop_back();
    else
      second.pop_back();
  }
  Encoding encoding = frame(clsId_, sepId_, std::move(first), std::move(second));
  encoding.truncated = truncated;
  return encoding;
}

} // namespace bertc
