//===- Gpt2Family.cpp - GPT-2: the decoder and its LM head ---------------===//
//
// Hugging Face's GPT2LMHeadModel (modeling_gpt2.py; its config.json is Gpt2Config.cpp's):
//   1. inputs: input_ids, position_ids, attention_mask (document ids: packed rows never
//      attend across documents);
//   2. embeddings: wte + wpe (learned positions), dropout;
//   3. per layer: LayerNorm ln_1, the fused q/k/v projection c_attn split in three, causal
//      attention, the output projection c_proj + dropout + residual; LayerNorm ln_2, the
//      MLP c_fc, GELU (tanh approximation: gelu_new), c_proj + dropout + residual;
//   4. the final LayerNorm ln_f, then task = "causal_lm": the LM head (wte when tied) and
//      the next-token cross-entropy.
// The projections are transformers' Conv1D, whose checkpoints hold [in, out] weights
// (ForwardBuilder::conv1D). Checkpoints without the "transformer." prefix (GPT2Model's)
// load too; the .attn.bias mask buffers of older checkpoints are no parameters and are
// skipped.
//
//===----------------------------------------------------------------------===//

#include "ForwardBuilder.h"

#include <cmath>

using namespace bertc;
using namespace mlir;

namespace {

class Gpt2Family final : public ModelFamily {
public:
  StringRef name() const override { return "gpt2"; }
  ArrayRef<StringRef> inputs() const override {
    static const StringRef names[] = {"input_ids", "position_ids", "attention_mask"};
    return names;
  }
  SmallVector<Value> buildModel(ForwardBuilder &forward) const override;
  Value buildTaskLoss(ForwardBuilder &forward, ArrayRef<Value> hiddenStates) const override;

private:
  Value block(ForwardBuilder &forward, Value hidden, int64_t layer) const;
  Value attention(ForwardBuilder &forward, Value hidden, StringRef prefix, StringRef group) const;
};

/// The word embeddings (the tied LM head reads the same parameter).
Value wordEmbeddings(ForwardBuilder &forward) {
  const ModelSpec &model = forward.job().model;
  return forward.param("transformer.wte.weight", {model.vocab, model.hidden}, "embeddings",
                       "normal", /*decay=*/true, model.locations, "vocab");
}

/// The init scale of a residual projection's (c_proj's) weight, as transformers'
/// GPT2PreTrainedModel._init_weights draws it without a checkpoint:
/// normal(0, initializer_range / sqrt(2 n_layer)). Given to conv1D, which sets it on the
/// weight whether or not a LoRA adapter wraps the layer's output.
double residualInitScale(int64_t layers) { return 1.0 / std::sqrt(2.0 * layers); }

SmallVector<Value> Gpt2Family::buildModel(ForwardBuilder &forward) const {
  const ModelSpec &model = forward.job().model;
  const KeyLocations &ml = model.locations;
  OpBuilder &builder = forward.opBuilder();
  // GPT-2's wte has no padding row: a pad_token_id (often the eos id) only pads batches.
  Value words = builder.create<bert::EmbeddingOp>(
      forward.at("transformer.wte", ml, "vocab"), forward.activationType(model.hidden),
      forward.modelInput("input_ids"), wordEmbeddings(forward), IntegerAttr());
  Value positionTable = forward.param("transformer.wpe.weight", {model.maxPosition, model.hidden},
                                      "embeddings", "normal", /*decay=*/true, ml, "max_position");
  Value positions = builder.create<bert::EmbeddingOp>(
      forward.at("transformer.wpe", ml, "max_position"), forward.activationType(model.hidden),
      forward.modelInput("position_ids"), positionTable, IntegerAttr());
  Value embedded = forward.add(words, positions, forward.at("transformer", ml, "hidden"));
  embedded = forward.dropout(embedded, model.embeddingDropout.value_or(model.dropout),
                             forward.at("transformer.drop", ml, "dropout"));
  SmallVector<Value> hiddenStates = {embedded};
  for (int64_t layer = 0; layer < model.layers; ++layer)
    hiddenStates.push_back(block(forward, hiddenStates.back(), layer));
  // transformers' last hidden state is ln_f's output.
  hiddenStates.back() =
      forward.layerNorm(hiddenStates.back(), "transformer.ln_f", "encoder", ml, "layers");
  return hiddenStates;
}

Value Gpt2Family::block(ForwardBuilder &forward, Value hidden, int64_t layer) const {
  const ModelSpec &model = forward.job().model;
  const KeyLocations &ml = model.locations;
  OpBuilder &builder = forward.opBuilder();
  std::string prefix = "transformer.h." + std::to_string(layer);
  std::string group = "encoder.layer." + std::to_string(layer);
  auto named = [&](StringRef suffix) { return forward.at(prefix + suffix.str(), ml, "layers"); };

  Value normed = forward.layerNorm(hidden, prefix + ".ln_1", group, ml, "layers");
  Value attended = attention(forward, normed, prefix, group);
  hidden = forward.add(hidden, attended, named(".attn"));

  normed = forward.layerNorm(hidden, prefix + ".ln_2", group, ml, "layers");
  Value expanded =
      forward.conv1D(normed, prefix + ".mlp.c_fc", model.intermediate, group, ml, "layers");
  auto gelu = builder.create<bert::GeluOp>(named(".mlp.act"), expanded.getType(), expanded);
  if (model.activation != "gelu")
    gelu.setApproximate(bert::GeluApproximation::Tanh);
  Value contracted = forward.conv1D(gelu.getResult(), prefix + ".mlp.c_proj", model.hidden, group,
                                    ml, "layers", residualInitScale(model.layers));
  contracted = forward.dropout(contracted, model.dropout, named(".mlp.dropout"));
  return forward.add(hidden, contracted, named(".mlp"));
}

Value Gpt2Family::attention(ForwardBuilder &forward, Value hidden, StringRef prefix,
                            StringRef group) const {
  const ModelSpec &model = forward.job().model;
  const KeyLocations &ml = model.locations;
  OpBuilder &builder = forward.opBuilder();
  auto named = [&](StringRef suffix) { return forward.at((prefix + suffix).str(), ml, "layers"); };
  // c_attn gives [q | k | v] along the features, as transformers splits it.
  Value qkv =
      forward.conv1D(hidden, prefix + ".attn.c_attn", 3 * model.hidden, group, ml, "layers");
  auto part = [&](StringRef what, int64_t index) -> Value {
    return builder.create<bert::SliceOp>(named((".attn.split_" + what).str()),
                                         forward.withLastDim(qkv, model.hidden), qkv,
                                         builder.getI64IntegerAttr(index * model.hidden));
  };
  Value query = part("query", 0), key = part("key", 1), value = part("value", 2);
  auto queryShape = cast<RankedTensorType>(query.getType()).getShape();
  auto lseType =
      RankedTensorType::get({queryShape[0], model.heads, queryShape[1]}, builder.getF32Type());
  auto op = builder.create<bert::AttentionOp>(
      named(".attn.attention"), query.getType(), lseType, query, key, value,
      forward.modelInput("attention_mask"), builder.getI64IntegerAttr(model.heads),
      builder.getF32FloatAttr(model.attentionDropout), forward.nextStream(),
      /*head_chunk=*/builder.getI64IntegerAttr(0));
  op.setCausal(true);
  Value projected = forward.conv1D(op.getResult(), prefix + ".attn.c_proj", model.hidden, group, ml,
                                   "layers", residualInitScale(model.layers));
  return forward.dropout(projected, model.dropout, named(".attn.resid_dropout"));
}

Value Gpt2Family::buildTaskLoss(ForwardBuilder &forward, ArrayRef<Value> hiddenStates) const {
  // task = "causal_lm", the one head of the family (FamilyConfig::tasks).
  return forward.causalLmLoss(hiddenStates.back(), wordEmbeddings(forward));
}

} // namespace

const ModelFamily &bertc::gpt2Family() {
  static const Gpt2Family family;
  return family;
}
