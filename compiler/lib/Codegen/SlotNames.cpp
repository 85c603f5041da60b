//===- SlotNames.cpp - C++ names of a trainer's arena slots ---------------===//

#include "SlotNames.h"

#include "bert/BertDialect.h"
#include "bertc/Analysis/StepMemory.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace bertc {

namespace {

/// Module paths within an encoder layer or the embeddings, longest first where one is a
/// prefix of another.
constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral> kShortNames[] = {
    {"attention.self.query", "attn_q"},
    {"attention.self.key", "attn_k"},
    {"attention.self.value", "attn_v"},
    {"attention.output.dense", "attn_out"},
    {"attention.output.LayerNorm", "attn_ln"},
    {"attention.output.dropout", "attn_drop"},
    {"attention.output", "attn_res"},
    {"attention", "attn"},
    {"intermediate.dense", "ffn_in"},
    {"intermediate.gelu", "ffn_gelu"},
    {"output.dense", "ffn_out"},
    {"output.dropout", "ffn_drop"},
    {"output.LayerNorm", "ffn_ln"},
    {"output", "ffn_res"},
    {"embeddings.word_embeddings", "emb_word"},
    {"embeddings.token_type_embeddings", "emb_type"},
    {"embeddings.position_embeddings", "emb_pos"},
    {"embeddings.LayerNorm", "emb_ln"},
    {"embeddings.dropout", "emb_drop"},
    {"embeddings", "emb"},
    {"pooler.dense", "pool"},
    {"pooler.first_token", "pool_cls"},
    {"pooler.activation", "pool_tanh"},
};

/// Whether `path` is `prefix` or continues it with a '.'.
bool startsWithComponent(StringRef path, StringRef prefix) {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '.');
}

/// `text` as a C++ identifier: letters, digits and single underscores.
std::string identifier(StringRef text) {
  std::string out;
  for (char c : text) {
    char kept = llvm::isAlnum(c) ? c : '_';
    if (kept == '_' && (out.empty() || out.back() == '_'))
      continue;
    out += kept;
  }
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  if (out.empty() || llvm::isDigit(out.front()))
    out.insert(0, "t_");
  return out;
}

} // namespace

std::string shortSourceName(StringRef source) {
  StringRef path = source;
  path.consume_front("bert.");
  std::string out;
  if (path.consume_front("encoder.layer.")) {
    auto [layer, rest] = path.split('.');
    out = "l" + layer.str();
    path = rest;
  }
  for (auto [prefix, shortName] : kShortNames) {
    if (!startsWithComponent(path, prefix))
      continue;
    out += (out.empty() ? "" : "_") + shortName.str();
    path = path.drop_front(prefix.size());
    break;
  }
  SmallVector<StringRef> rest;
  path.split(rest, '.', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef component : rest) {
    StringRef word = component == "LayerNorm" ? "ln"
                     : component == "weight"  ? "w"
                     : component == "bias"    ? "b"
                                              : component;
    out += (out.empty() ? "" : "_") + word.str();
  }
  return out;
}

std::string SlotNamer::name(Operation *op, unsigned index) {
  std::string source, origin;
  describeLocation(op->getLoc(), source, origin);
  StringRef kind = op->getName().stripDialect();
  bool derived = kind.contains("grad") || kind == "cast" || kind == "fill";
  std::string base = shortSourceName(source);
  if (base.empty() || derived)
    base += (base.empty() ? "" : "_") + kind.str();
  if (isa<bert::AttentionOp>(op))
    base += index == 1 ? "_lse" : "";
  else if (isa<bert::AddLayerNormOp>(op)) // the LayerNorm's name, its input the sum
    base += index == 0 ? "_sum" : "";
  else if (op->getNumResults() > 1)
    base += "_" + std::to_string(index);
  base = identifier(base);
  std::string candidate = base;
  for (unsigned n = 2; !taken.insert(candidate).second; ++n)
    candidate = base + "_" + std::to_string(n);
  return candidate;
}

} // namespace bertc
