// The BPE model: symbols to vocabulary ids, then merges by rank.
//
// tokenize() follows the tokenizers library's BPE::merge_word and Word::merge_all:
//  1. Each symbol's id: its vocabulary entry; else, with byte fallback, one <0xNN> token per
//     byte of it when the vocabulary has them all; else the unknown token (one for a run of
//     them with fuse_unk), or nothing when the model has no unknown token.
//  2. While some adjacent pair has a merge, merge the pair of lowest rank, the leftmost of
//     those (the library's heap orders equal ranks by position).
// With ignore_merges a word whose whole text is in the vocabulary is that token.
#include "bertc/runtime/bpe_model.h"

#include <cstdio>

namespace bertc {

BpeModel::BpeModel(std::unordered_map<std::string, int32_t> vocab,
                   const std::vector<BpeMerge> &merges, BpeOptions options)
    : vocab_(std::move(vocab)), options_(options) {
  for (const auto &[text, id] : vocab_)
    tokens_.emplace(id, text);
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const BpeMerge &merge = merges[rank];
    // The first of a merge listed twice keeps its rank, as the library's map does.
    merges_.emplace(pairKey(merge.left, merge.right), Ranked{uint32_t(rank), merge.merged});
  }
}

std::optional<int32_t> BpeModel::find(std::string_view token) const {
  auto found = vocab_.find(std::string(token));
  return found == vocab_.end() ? std::nullopt : std::optional<int32_t>(found->second);
}

const std::string *BpeModel::token(int32_t id) const {
  auto found = tokens_.find(id);
  return found == tokens_.end() ? nullptr : &found->second;
}

void BpeModel::tokenize(const std::vector<BpeSymbol> &word, std::vector<Token> &out) const {
  if (word.empty())
    return;
  if (options_.ignoreMerges) {
    std::string whole;
    for (const BpeSymbol &symbol : word)
      whole += symbol.text;
    if (std::optional<int32_t> id = find(whole)) {
      out.push_back({whole, *id, word.front().begin, word.back().end});
      return;
    }
  }
  struct Part {
    int32_t id;
    size_t begin, end;
  };
  std::vector<Part> parts;
  parts.reserve(word.size());
  bool lastUnknown = false;
  for (const BpeSymbol &symbol : word) {
    if (std::optional<int32_t> id = find(symbol.text)) {
      parts.push_back({*id, symbol.begin, symbol.end});
      lastUnknown = false;
      continue;
    }
    if (options_.byteFallback) {
      std::vector<int32_t> bytes;
      for (unsigned char byte : symbol.text) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", byte);
        if (std::optional<int32_t> id = find(name))
          bytes.push_back(*id);
        else
          break;
      }
      if (bytes.size() == symbol.text.size()) {
        for (int32_t id : bytes)
          parts.push_back({id, symbol.begin, symbol.end});
        lastUnknown = false;
        continue;
      }
    }
    if (!options_.unkId)
      continue;
    if (options_.fuseUnk && lastUnknown)
      parts.back().end = symbol.end;
    else
      parts.push_back({*options_.unkId, symbol.begin, symbol.end});
    lastUnknown = true;
  }

  while (parts.size() > 1) {
    size_t best = SIZE_MAX;
    Ranked bestMerge{UINT32_MAX, 0};
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      auto found = merges_.find(pairKey(parts[i].id, parts[i + 1].id));
      if (found != merges_.end() && found->second.rank < bestMerge.rank) {
        best = i;
        bestMerge = found->second;
      }
    }
    if (best == SIZE_MAX)
      break;
    parts[best] = {bestMerge.merged, parts[best].begin, parts[best + 1].end};
    parts.erase(parts.begin() + std::ptrdiff_t(best) + 1);
  }
  for (const Part &part : parts)
    out.push_back({*token(part.id), part.id, part.begin, part.end});
}

} // namespace bertc
