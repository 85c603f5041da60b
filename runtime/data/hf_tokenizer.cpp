// The tokenizer.json pipeline: added tokens, normalizer, pre-tokenizer, BPE, template; and
// the decoders.
//
// encode() runs, as the tokenizers library's Tokenizer::encode does:
//  1. The added tokens are split out of the raw text, leftmost-longest.
//  2. Each piece between them is normalized: NFC, or "▁" prepended (a non-empty piece) and
//     each space replaced by "▁"; every character keeps the span of the one it came from.
//  3. The normalized piece is split by the pattern (each match a word), or stays one word.
//  4. A word's symbols are its characters, or with the byte-level pre-tokenizer the
//     byte-level characters of its UTF-8 bytes (each with its character's span); the BPE
//     model turns them into tokens.
//  5. With special tokens asked for, the single template places them around the text.
#include "bertc/runtime/hf_tokenizer.h"

#include "bertc/runtime/tokenizer_unicode.h"

#include <array>

namespace bertc {
namespace {

constexpr char32_t kMetaspace = 0x2581; // ▁

/// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others for 256 + n
/// in byte order.
const std::array<char32_t, 256> &byteLevelAlphabet() {
  static const std::array<char32_t, 256> alphabet = [] {
    std::array<char32_t, 256> chars{};
    char32_t next = 256;
    for (int byte = 0; byte < 256; ++byte) {
      bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                       (byte >= 0xAE && byte <= 0xFF);
      chars[size_t(byte)] = printable ? char32_t(byte) : next++;
    }
    return chars;
  }();
  return alphabet;
}

/// The byte a byte-level character stands for, or -1.
int byteOfLevelChar(char32_t c) {
  static const std::array<int16_t, 324> bytes = [] {
    std::array<int16_t, 324> table;
    table.fill(-1);
    for (size_t byte = 0; byte < 256; ++byte)
      table[byteLevelAlphabet()[byte]] = int16_t(byte);
    return table;
  }();
  return c < bytes.size() ? bytes[c] : -1;
}

/// `bytes` as UTF-8 with each maximal ill-formed subsequence replaced by U+FFFD, as Rust's
/// String::from_utf8_lossy does.
std::string lossyUtf8(std::string_view bytes) {
  std::string out;
  for (size_t at = 0; at < bytes.size();) {
    char32_t codePoint;
    if (size_t length = unicode::decodeUtf8At(bytes, at, codePoint)) {
      out.append(bytes.substr(at, length));
      at += length;
      continue;
    }
    // The longest prefix of a well-formed sequence at `at` is one replacement.
    uint8_t lead = uint8_t(bytes[at]);
    size_t need = lead >= 0xC2 && lead <= 0xDF   ? 2
                  : lead >= 0xE0 && lead <= 0xEF ? 3
                  : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                 : 1;
    size_t taken = 1;
    for (; taken < need && at + taken < bytes.size(); ++taken) {
      uint8_t byte = uint8_t(bytes[at + taken]);
      uint8_t low = 0x80, high = 0xBF;
      if (taken == 1) {
        low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
        high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
      }
      if (byte < low || byte > high)
        break;
    }
    out += "\xEF\xBF\xBD";
    at += taken;
  }
  return out;
}

/// The byte of a "<0xNN>" token, or -1.
int fallbackByte(const std::string &token) {
  auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>')
    return -1;
  int high = hex(token[3]), low = hex(token[4]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

std::string utf8(char32_t codePoint) {
  std::string out;
  unicode::appendUtf8(codePoint, out);
  return out;
}

} // namespace

HfTokenizer::HfTokenizer(HfTokenizerSpec spec, BpeModel model)
    : spec_(std::move(spec)), model_(std::move(model)) {}

const std::string *HfTokenizer::token(int32_t id) const {
  for (const AddedToken &added : spec_.addedTokens)
    if (added.id == id)
      return &added.content;
  return model_.token(id);
}

std::vector<Token> HfTokenizer::encode(std::string_view text, bool addSpecialTokens) const {
  std::vector<unicode::Char> chars;
  size_t invalid = unicode::decodeUtf8(text, 0, chars);
  if (invalid != SIZE_MAX)
    throw TokenizerError("text is not UTF-8 at byte " + std::to_string(invalid));
  std::vector<Token> tokens;
  size_t pieceBegin = 0;
  for (size_t at = 0; at < text.size();) {
    const AddedToken *longest = nullptr;
    for (const AddedToken &added : spec_.addedTokens)
      if (!added.content.empty() && text.compare(at, added.content.size(), added.content) == 0 &&
          (!longest || added.content.size() > longest->content.size()))
        longest = &added;
    if (!longest) {
      ++at;
      continue;
    }
    encodeSegment(text.substr(pieceBegin, at - pieceBegin), pieceBegin, tokens);
    tokens.push_back({longest->content, longest->id, at, at + longest->content.size()});
    at += longest->content.size();
    pieceBegin = at;
  }
  encodeSegment(text.substr(pieceBegin), pieceBegin, tokens);
  if (!addSpecialTokens)
    return tokens;
  std::vector<Token> templated;
  for (int32_t id : spec_.singleTemplate) {
    if (id < 0) {
      templated.insert(templated.end(), tokens.begin(), tokens.end());
    } else {
      const std::string *special = token(id);
      templated.push_back({special ? *special : std::string(), id, 0, 0});
    }
  }
  return templated;
}

void HfTokenizer::encodeSegment(std::string_view text, size_t base, std::vector<Token> &out) const {
  if (text.empty())
    return;
  std::vector<unicode::Char> chars;
  unicode::decodeUtf8(text, base, chars);
  if (spec_.normalizer == HfTokenizerSpec::Normalizer::kNfc) {
    chars = unicode::composeCanonical(chars);
  } else if (spec_.normalizer == HfTokenizerSpec::Normalizer::kPrependReplace) {
    chars.insert(chars.begin(), {kMetaspace, chars.front().begin, chars.front().end});
    for (unicode::Char &c : chars)
      if (c.codePoint == ' ')
        c.codePoint = kMetaspace;
  }
  if (spec_.byteLevel && spec_.addPrefixSpace && !chars.empty() && chars.front().codePoint != ' ')
    chars.insert(chars.begin(), {U' ', chars.front().begin, chars.front().begin});

  std::u32string codePoints;
  for (const unicode::Char &c : chars)
    codePoints += c.codePoint;
  std::vector<std::pair<size_t, size_t>> words = {{0, chars.size()}};
  if (spec_.split)
    words = findSplitMatches(*spec_.split, codePoints);
  std::vector<BpeSymbol> symbols;
  for (auto [first, last] : words) {
    symbols.clear();
    for (size_t i = first; i < last; ++i) {
      const unicode::Char &c = chars[i];
      std::string bytes = utf8(c.codePoint);
      if (!spec_.byteLevel) {
        symbols.push_back({bytes, c.begin, c.end});
        continue;
      }
      for (unsigned char byte : bytes)
        symbols.push_back({utf8(byteLevelAlphabet()[byte]), c.begin, c.end});
    }
    model_.tokenize(symbols, out);
  }
}

std::string HfTokenizer::decode(const std::vector<int32_t> &ids, bool skipSpecialTokens) const {
  std::vector<std::string> tokens;
  for (int32_t id : ids) {
    const AddedToken *added = nullptr;
    for (const AddedToken &candidate : spec_.addedTokens)
      if (candidate.id == id)
        added = &candidate;
    if (added && added->special && skipSpecialTokens)
      continue;
    if (const std::string *text = added ? &added->content : model_.token(id))
      tokens.push_back(*text);
  }
  std::string out;
  switch (spec_.decoder) {
  case HfTokenizerSpec::Decoder::kNone:
    for (size_t i = 0; i < tokens.size(); ++i)
      out += (i ? " " : "") + tokens[i];
    return out;
  case HfTokenizerSpec::Decoder::kByteLevel: {
    std::string bytes;
    for (const std::string &token : tokens) {
      // A token with a character outside the alphabet stands for its own bytes.
      std::string own;
      std::vector<unicode::Char> chars;
      unicode::decodeUtf8(token, 0, chars);
      for (const unicode::Char &c : chars) {
        int byte = byteOfLevelChar(c.codePoint);
        if (byte < 0) {
          own = token;
          break;
        }
        own += char(byte);
      }
      bytes += own;
    }
    return lossyUtf8(bytes);
  }
  case HfTokenizerSpec::Decoder::kSentencePiece: {
    std::string pending; // bytes of successive <0xNN> tokens
    size_t pendingCount = 0;
    auto flush = [&] {
      std::string valid = lossyUtf8(pending);
      if (valid == pending) {
        out += pending;
      } else {
        for (size_t i = 0; i < pendingCount; ++i)
          out += "\xEF\xBF\xBD";
      }
      pending.clear();
      pendingCount = 0;
    };
    const std::string metaspace = utf8(kMetaspace);
    for (const std::string &token : tokens) {
      if (int byte = fallbackByte(token); byte >= 0) {
        pending += char(byte);
        ++pendingCount;
        continue;
      }
      flush();
      for (size_t at = 0; at < token.size();) {
        if (token.compare(at, metaspace.size(), metaspace) == 0) {
          out += ' ';
          at += metaspace.size();
        } else {
          out += token[at++];
        }
      }
    }
    flush();
    if (!out.empty() && out.front() == ' ')
      out.erase(0, 1);
    return out;
  }
  }
  return out;
}

} // namespace bertc
