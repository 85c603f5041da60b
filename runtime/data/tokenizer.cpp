// BertTokenizerFast in C++: special tokens split out, the tokenizers library's
// BertNormalizer and BertPreTokenizer (over the Unicode of tokenizer_unicode.h), WordPiece, and
// the [CLS]/[SEP] framing with LongestFirst truncation. Each character carries the byte span
// of the original character it came from through every step.
#include "bertc/runtime/tokenizer.h"

#include "bertc/runtime/input_files.h"
#include "bertc/runtime/tokenizer_unicode.h"

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

std::string TokenizerSettings::describe() const {
  std::string text = lowerCase ? "uncased" : "cased";
  if (stripsAccents() != lowerCase)
    text += lowerCase ? ", accents kept" : ", accents stripped";
  if (!chineseChars)
    text += ", CJK not split";
  return text;
}

Tokenizer::Tokenizer(Vocab vocab, TokenizerSettings settings)
    : vocab_(std::move(vocab)), settings_(settings), clsId_(*vocab_.find("[CLS]")),
      sepId_(*vocab_.find("[SEP]")), padId_(*vocab_.find("[PAD]")), unkId_(*vocab_.find("[UNK]")) {
  for (const char *name : {"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"})
    if (std::optional<int32_t> id = vocab_.find(name))
      specials_.emplace_back(name, *id);
}

/// The special tokens are added tokens that are not normalized: they are split out of the
/// text as written (never lower-cased or split), and each piece between them is tokenized.
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

/// BertNormalizer, BertPreTokenizer, then WordPiece per word:
///  1. clean: drop NUL, U+FFFD and control/format/unassigned characters, turn whitespace
///     into spaces;
///  2. with chineseChars, put spaces around CJK ideographs;
///  3. when stripping accents: NFD, then drop non-spacing marks (Mn);
///  4. with lowerCase: each character's full lower-case mapping (İ gives i + U+0307; no
///     final sigma, as the mapping takes no context). No NFC anywhere: a cased Ω (U+2126
///     OHM SIGN) stays itself;
///  5. split on spaces, and around each punctuation character;
///  6. WordPiece each word.
void Tokenizer::tokenizeSegment(std::string_view text, size_t base, std::vector<Token> &out) const {
  std::vector<Char> decoded, cleaned;
  if (size_t bad = decodeUtf8(text, base, decoded); bad != SIZE_MAX)
    throw TokenizerError("invalid UTF-8 at byte " + std::to_string(base + bad) + " of the text");
  for (const Char &c : decoded) {
    CharClass kind = charClass(c.codePoint);
    if (kind == kDrop)
      continue;
    bool spaced = settings_.chineseChars && kind != kSpace && isChineseChar(c.codePoint);
    if (spaced)
      cleaned.push_back({U' ', c.begin, c.begin});
    cleaned.push_back({kind == kSpace ? U' ' : c.codePoint, c.begin, c.end});
    if (spaced)
      cleaned.push_back({U' ', c.end, c.end});
  }
  if (settings_.stripsAccents()) {
    std::vector<Char> stripped;
    for (const Char &c : decomposeCanonical(cleaned))
      if (charClass(c.codePoint) != kMark)
        stripped.push_back(c);
    cleaned.swap(stripped);
  }
  std::vector<Char> normalized;
  if (settings_.lowerCase) {
    for (const Char &c : cleaned)
      appendLower(c, normalized);
  } else {
    normalized.swap(cleaned);
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
  auto [firstKept, secondKept] = pairLengths(first.size(), second.size(), maxLen - 3);
  bool truncated = firstKept < first.size() || secondKept < second.size();
  first.resize(firstKept, Token{});
  second.resize(secondKept, Token{});
  Encoding encoding = frame(clsId_, sepId_, std::move(first), std::move(second));
  encoding.truncated = truncated;
  return encoding;
}

/// The tokenizers library's LongestFirst (truncate_encodings): with n1 <= n2 the two
/// lengths, the longer is cut to max(n1, room - n1); when the two still do not fit, each is
/// cut to half the room, the longer taking the odd token.
std::pair<size_t, size_t> pairLengths(size_t first, size_t second, size_t room) {
  if (first + second <= room)
    return {first, second};
  bool swapped = first > second;
  size_t shorter = std::min(first, second), longer;
  if (shorter > room)
    longer = shorter;
  else
    longer = std::max(shorter, room - shorter);
  if (shorter + longer > room) {
    shorter = room / 2;
    longer = shorter + room % 2;
  }
  return swapped ? std::make_pair(longer, shorter) : std::make_pair(shorter, longer);
}

} // namespace bertc
