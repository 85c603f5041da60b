// BertTokenizer in C++: UTF-8 decoding with byte spans, the Unicode steps of HF's
// BasicTokenizer (classes, lower-casing, NFD/NFC) over the generated tables, WordPiece, and
// the [CLS]/[SEP] framing with longest-first truncation. Each character carries the byte
// span of the original character it came from through every step.
#include "bertc/runtime/tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace bertc {
namespace {

/// How BertTokenizer treats a character (see scripts/gen_unicode_tables.py).
enum CharClass : uint8_t { kOther, kDrop, kSpace, kPunct, kMark };

struct CharClassRange {
  char32_t first, last;
  CharClass charClass;
};
struct CombiningClassRange {
  char32_t first, last;
  uint8_t combiningClass;
};
/// Every stride-th code point of [first, last] lower-cases to itself + delta.
struct LowerRun {
  char32_t first, last;
  uint32_t stride;
  int32_t delta;
};
struct LowerPair {
  char32_t codePoint;
  char32_t lower[2];
};
/// One level of a canonical decomposition; second is 0 for a singleton.
struct Decomposition {
  char32_t codePoint, first, second;
  uint8_t composes; ///< 1 for a primary composite, which NFC recomposes from the pair
};

#include "unicode_tables.inc"

/// WordPiece's max_input_chars_per_word: longer words become [UNK].
constexpr size_t kMaxWordChars = 100;

/// A character of the text being normalized and the bytes of the original it came from.
struct Char {
  char32_t codePoint;
  size_t begin, end;
};

/// The table entry whose range holds `codePoint`, or nullptr. Entries are sorted by first.
template <class Entry, size_t N>
const Entry *findRange(const Entry (&table)[N], char32_t codePoint) {
  auto after = std::upper_bound(std::begin(table), std::end(table), codePoint,
                                [](char32_t cp, const Entry &e) { return cp < e.first; });
  if (after == std::begin(table) || (after - 1)->last < codePoint)
    return nullptr;
  return after - 1;
}

CharClass charClass(char32_t codePoint) {
  const CharClassRange *range = findRange(kCharClassRanges, codePoint);
  return range ? range->charClass : kOther;
}

/// The entry of a table sorted by codePoint that is for `codePoint`, or nullptr.
template <class Entry, size_t N>
const Entry *findEntry(const Entry (&table)[N], char32_t codePoint) {
  auto entry = std::lower_bound(std::begin(table), std::end(table), codePoint,
                                [](const Entry &e, char32_t cp) { return e.codePoint < cp; });
  return entry != std::end(table) && entry->codePoint == codePoint ? entry : nullptr;
}

uint8_t combiningClass(char32_t codePoint) {
  const CombiningClassRange *range = findRange(kCombiningClassRanges, codePoint);
  return range ? range->combiningClass : 0;
}

/// HF's _is_chinese_char: the CJK Unified Ideographs blocks and their extensions, and the
/// CJK Compatibility Ideographs (not Hangul, Hiragana or Katakana).
bool isChineseChar(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/// Appends the lower case of `c` as Python's str.lower() gives it for that one character
/// (one or two code points, each with c's span).
void appendLower(const Char &c, std::vector<Char> &out) {
  if (const LowerPair *pair = findEntry(kLowerPairs, c.codePoint)) {
    out.push_back({pair->lower[0], c.begin, c.end});
    out.push_back({pair->lower[1], c.begin, c.end});
    return;
  }
  const LowerRun *run = findRange(kLowerRuns, c.codePoint);
  bool mapped = run && (c.codePoint - run->first) % run->stride == 0;
  out.push_back({mapped ? char32_t(int64_t(c.codePoint) + run->delta) : c.codePoint,
                 c.begin, c.end});
}

// Hangul syllables decompose and compose arithmetically (Unicode 3.12).
constexpr char32_t kHangulBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161,
                   kTrailBase = 0x11A7;
constexpr char32_t kLeadCount = 19, kVowelCount = 21, kTrailCount = 28,
                   kSyllableCount = 11172;

/// Appends the full canonical decomposition of `codePoint`, each part with `span`'s bytes.
void appendDecomposed(char32_t codePoint, const Char &span, std::vector<Char> &out) {
  if (codePoint >= kHangulBase && codePoint < kHangulBase + kSyllableCount) {
    char32_t index = codePoint - kHangulBase;
    out.push_back({kLeadBase + index / (kVowelCount * kTrailCount), span.begin, span.end});
    out.push_back({kVowelBase + index % (kVowelCount * kTrailCount) / kTrailCount, span.begin,
                   span.end});
    if (index % kTrailCount != 0)
      out.push_back({kTrailBase + index % kTrailCount, span.begin, span.end});
    return;
  }
  const Decomposition *decomposition = findEntry(kDecompositions, codePoint);
  if (!decomposition) {
    out.push_back({codePoint, span.begin, span.end});
    return;
  }
  appendDecomposed(decomposition->first, span, out);
  if (decomposition->second != 0)
    appendDecomposed(decomposition->second, span, out);
}

/// NFD: full canonical decomposition, then each run of non-starters stably sorted by
/// combining class (the canonical ordering algorithm).
std::vector<Char> decomposeCanonical(const std::vector<Char> &chars) {
  std::vector<Char> out;
  out.reserve(chars.size());
  for (const Char &c : chars)
    appendDecomposed(c.codePoint, c, out);
  auto isStarter = [](const Char &c) { return combiningClass(c.codePoint) == 0; };
  for (auto run = out.begin(); run != out.end();) {
    run = std::find_if_not(run, out.end(), isStarter);
    auto runEnd = std::find_if(run, out.end(), isStarter);
    std::stable_sort(run, runEnd, [](const Char &a, const Char &b) {
      return combiningClass(a.codePoint) < combiningClass(b.codePoint);
    });
    run = runEnd;
  }
  return out;
}

/// The primary composite of the pair (first, second), or 0 when there is none.
char32_t composePair(char32_t first, char32_t second) {
  if (first >= kLeadBase && first < kLeadBase + kLeadCount && second >= kVowelBase &&
      second < kVowelBase + kVowelCount)
    return kHangulBase +
           ((first - kLeadBase) * kVowelCount + second - kVowelBase) * kTrailCount;
  if (first >= kHangulBase && first < kHangulBase + kSyllableCount &&
      (first - kHangulBase) % kTrailCount == 0 && second > kTrailBase &&
      second < kTrailBase + kTrailCount)
    return first + (second - kTrailBase);
  static const std::unordered_map<uint64_t, char32_t> composites = [] {
    std::unordered_map<uint64_t, char32_t> map;
    for (const Decomposition &d : kDecompositions)
      if (d.composes)
        map.emplace(uint64_t(d.first) << 32 | d.second, d.codePoint);
    return map;
  }();
  auto found = composites.find(uint64_t(first) << 32 | second);
  return found == composites.end() ? 0 : found->second;
}

/// NFC: NFD, then the canonical composition algorithm. A character combines with the last
/// starter unless a character between them has combining class 0 or >= its own; the
/// composite's span covers both parts.
std::vector<Char> composeCanonical(const std::vector<Char> &chars) {
  std::vector<Char> decomposed = decomposeCanonical(chars), out;
  out.reserve(decomposed.size());
  size_t starter = SIZE_MAX;   // index in out of the last starter
  uint8_t lastClass = 0;       // combining class of the last character after it
  for (const Char &c : decomposed) {
    uint8_t ownClass = combiningClass(c.codePoint);
    if (starter != SIZE_MAX) {
      bool adjacent = starter + 1 == out.size();
      if (adjacent || (lastClass != 0 && lastClass < ownClass)) {
        if (char32_t composite = composePair(out[starter].codePoint, c.codePoint)) {
          out[starter] = {composite, std::min(out[starter].begin, c.begin),
                          std::max(out[starter].end, c.end)};
          continue;
        }
      }
    }
    if (ownClass == 0)
      starter = out.size();
    lastClass = ownClass;
    out.push_back(c);
  }
  return out;
}

/// Decodes UTF-8 into `out` (spans offset by `base`); returns the offset of the first
/// invalid byte, or SIZE_MAX when all of `text` is valid.
size_t decodeUtf8(std::string_view text, size_t base, std::vector<Char> &out) {
  for (size_t at = 0; at < text.size();) {
    auto byte = [&](size_t i) { return uint8_t(text[i]); };
    uint8_t lead = byte(at);
    size_t length = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2
                    : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
    if (length == 0 || at + length > text.size())
      return at;
    char32_t codePoint = length == 1 ? lead : lead & (0x7F >> length);
    for (size_t i = 1; i < length; ++i) {
      if ((byte(at + i) & 0xC0) != 0x80)
        return at;
      codePoint = codePoint << 6 | (byte(at + i) & 0x3F);
    }
    bool overlong = (length == 3 && codePoint < 0x800) || (length == 4 && codePoint < 0x10000);
    if (overlong || (codePoint >= 0xD800 && codePoint <= 0xDFFF) || codePoint > 0x10FFFF)
      return at;
    out.push_back({codePoint, base + at, base + at + length});
    at += length;
  }
  return SIZE_MAX;
}

void appendUtf8(char32_t cp, std::string &out) {
  static const uint8_t kLeadBits[] = {0x00, 0xC0, 0xE0, 0xF0};
  int continuations = cp < 0x80 ? 0 : cp < 0x800 ? 1 : cp < 0x10000 ? 2 : 3;
  out += char(kLeadBits[continuations] | cp >> 6 * continuations);
  for (int i = continuations - 1; i >= 0; --i)
    out += char(0x80 | (cp >> 6 * i & 0x3F));
}

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
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw TokenizerError(path + ": cannot open vocabulary: " + std::strerror(errno));
  Vocab vocab;
  vocab.path_ = path;
  std::string line;
  for (size_t lineNumber = 1; std::getline(file, line); ++lineNumber) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    auto [entry, added] = vocab.ids_.emplace(line, int32_t(vocab.tokens_.size()));
    if (!added)
      throw TokenizerError(path + ":" + std::to_string(lineNumber) + ": token '" + line +
                           "' is listed twice (first on line " +
                           std::to_string(entry->second + 1) + ")");
    vocab.tokens_.push_back(line);
  }
  if (file.bad())
    throw TokenizerError(path + ": read failed");
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
      sepId_(*vocab_.find("[SEP]")), padId_(*vocab_.find("[PAD]")),
      unkId_(*vocab_.find("[UNK]")) {
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
void Tokenizer::tokenizeSegment(std::string_view text, size_t base,
                                std::vector<Token> &out) const {
  std::vector<Char> decoded, lowered, cleaned;
  if (size_t bad = decodeUtf8(text, base, decoded); bad != SIZE_MAX)
    throw TokenizerError("invalid UTF-8 at byte " + std::to_string(base + bad) +
                         " of the text");
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
  tokens.resize(std::min(tokens.size(), maxLen - 2), Token{});
  return frame(clsId_, sepId_, std::move(tokens), {});
}

Encoding Tokenizer::encodePair(std::string_view a, std::string_view b, size_t maxLen) const {
  if (maxLen < 3)
    throw std::invalid_argument("encodePair: maxLen " + std::to_string(maxLen) +
                                " leaves no room for [CLS] and two [SEP]");
  std::vector<Token> first = tokenize(a), second = tokenize(b);
  while (first.size() + second.size() + 3 > maxLen) {
    if (first.size() > second.size())
      first.pop_back();
    else
      second.pop_back();
  }
  return frame(clsId_, sepId_, std::move(first), std::move(second));
}

} // namespace bertc
