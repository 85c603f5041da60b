//===- SlotNames.h - C++ names of a trainer's arena slots --------*- C++ -*-===//
//
// Generated steps name each tensor's pointer after where it comes from, so that a reader
// of trainer.cpp or a plan-check report can find it in the model: the op's source name
// (the Hugging Face module path the frontend gave it, shortened: l3_ffn_gelu for
// bert.encoder.layer.3.intermediate.gelu), then, for ops the passes derived from it, their
// kind (l3_ffn_gelu_gelu_grad, l3_ffn_in_cast, loss_fill for the backward's seed).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace bertc {

/// The short form of a Hugging Face module path: "bert.encoder.layer.0.attention.self.query"
/// becomes "l0_attn_q", "bert.embeddings.LayerNorm.weight" "emb_ln_w".
std::string shortSourceName(llvm::StringRef source);

/// Unique C++ identifiers for the results of the ops of one function.
class SlotNamer {
public:
  /// The name of result `index` of `op`: its source's short name, its kind when the op is
  /// derived (a gradient, a cast) or has no source, the result's index when the op has
  /// several, and "_2", "_3", ... when the name is taken.
  std::string name(mlir::Operation *op, unsigned index);

private:
  llvm::StringSet<> taken;
};

} // namespace bertc
