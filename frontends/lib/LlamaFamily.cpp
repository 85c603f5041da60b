//===- LlamaFamily.cpp - Llama, Mistral and Qwen2: the decoder and its LM head -===//
//
// Hugging Face's LlamaForCausalLM (modeling_llama.py; Mistral's and Qwen2's are the same
// graph, Qwen2 with q/k/v biases; their config.json is LlamaConfig.cpp's):
//   1. inputs: input_ids, position_ids, attention_mask (document ids: packed rows never
//      attend across documents);
//   2. embeddings: embed_tokens;
//   3. per layer: RMSNorm, q/k/v projections, rotary embeddings of q and k, causal
//      grouped-query attention, output projection + residual; RMSNorm, the SiLU-gated MLP
//      down(silu(gate x) * up x) + residual;
//   4. the final RMSNorm, then task = "causal_lm": the LM head (the word embeddings when
//      tied) and the next-token cross-entropy.
//
//===----------------------------------------------------------------------===//

#include "ForwardBuilder.h"
#include "RopeFrequencies.h"

using namespace bertc;
using namespace mlir;

namespace {

class LlamaFamily final : public ModelFamily {
public:
  explicit LlamaFamily(StringRef name) : familyName(name) {}

  StringRef name() const override { return familyName; }
  ArrayRef<StringRef> inputs() const override {
    static const StringRef names[] = {"input_ids", "position_ids", "attention_mask"};
    return names;
  }
  SmallVector<Value> buildModel(ForwardBuilder &forward) const override;
  Value buildTaskLoss(ForwardBuilder &forward, ArrayRef<Value> hiddenStates) const override;

private:
  Value decoderLayer(ForwardBuilder &forward, Value hidden, int64_t layer,
                     ArrayRef<float> inverseFrequencies) const;
  Value attention(ForwardBuilder &forward, Value hidden, StringRef prefix, StringRef group,
                  ArrayRef<float> inverseFrequencies) const;

  StringRef familyName;
};

/// The word embeddings (a tied LM head reads the same parameter).
Value wordEmbeddings(ForwardBuilder &forward) {
  const ModelSpec &model = forward.job().model;
  return forward.param("model.embed_tokens.weight", {model.vocab, model.hidden}, "embeddings",
                       "normal", /*decay=*/true, model.locations, "vocab");
}

SmallVector<Value> LlamaFamily::buildModel(ForwardBuilder &forward) const {
  const ModelSpec &model = forward.job().model;
  const KeyLocations &ml = model.locations;
  OpBuilder &builder = forward.opBuilder();
  IntegerAttr paddingIdx =
      model.padRowFixed ? builder.getI64IntegerAttr(model.padTokenId) : IntegerAttr();
  Value embedded = builder.create<bert::EmbeddingOp>(
      forward.at("model.embed_tokens", ml, "vocab"), forward.activationType(model.hidden),
      forward.modelInput("input_ids"), wordEmbeddings(forward), paddingIdx);
  SmallVector<Value> hiddenStates = {embedded};
  SmallVector<float> inverseFrequencies = ropeInverseFrequencies(model);
  for (int64_t layer = 0; layer < model.layers; ++layer)
    hiddenStates.push_back(decoderLayer(forward, hiddenStates.back(), layer, inverseFrequencies));
  // transformers' last hidden state is the final norm's output.
  hiddenStates.back() = forward.rmsNorm(hiddenStates.back(), "model.norm", "encoder", ml, "layers");
  return hiddenStates;
}

Value LlamaFamily::decoderLayer(ForwardBuilder &forward, Value hidden, int64_t layer,
                                ArrayRef<float> inverseFrequencies) const {
  const ModelSpec &model = forward.job().model;
  const KeyLocations &ml = model.locations;
  OpBuilder &builder = forward.opBuilder();
  std::string prefix = "model.layers." + std::to_string(layer);
  std::string group = "encoder.layer." + std::to_string(layer);
  auto named = [&](StringRef suffix) { return forward.at(prefix + suffix.str(), ml, "layers"); };
  auto linear = [&](Value x, StringRef module, int64_t outFeatures, bool bias) {
    return forward.linear(x, prefix + module.str(), outFeatures, group, ml, "layers", bias);
  };

  Value normed = forward.rmsNorm(hidden, prefix + ".input_layernorm", group, ml, "layers");
  Value attended = attention(forward, normed, prefix, group, inverseFrequencies);
  hidden = forward.add(hidden, attended, named(".self_attn"));

  normed = forward.rmsNorm(hidden, prefix + ".post_attention_layernorm", group, ml, "layers");
  Value gate = linear(normed, ".mlp.gate_proj", model.intermediate, model.mlpBias);
  Value up = linear(normed, ".mlp.up_proj", model.intermediate, model.mlpBias);
  Value activated = builder.create<bert::SiluOp>(named(".mlp.act_fn"), gate.getType(), gate);
  Value gated = builder.create<bert::MulOp>(named(".mlp"), up.getType(), activated, up);
  Value down = linear(gated, ".mlp.down_proj", model.hidden, model.mlpBias);
  return forward.add(hidden, down, named(".mlp"));
}

Value LlamaFamily::attention(ForwardBuilder &forward, Value hidden, StringRef prefix,
                             StringRef group, ArrayRef<float> inverseFrequencies) const {
  const ModelSpec &model = forward.job().model;
  const KeyLocations &ml = model.locations;
  OpBuilder &builder = forward.opBuilder();
  auto named = [&](StringRef suffix) { return forward.at((prefix + suffix).str(), ml, "layers"); };
  auto linear = [&](Value x, StringRef module, int64_t outFeatures, bool bias) {
    return forward.linear(x, prefix + module.str(), outFeatures, group, ml, "layers", bias);
  };
  const int64_t headDim = model.attentionHeadDim(), kvHeads = model.keyValueHeads();
  Value query = linear(hidden, ".self_attn.q_proj", model.heads * headDim, model.qkvBias);
  Value key = linear(hidden, ".self_attn.k_proj", kvHeads * headDim, model.qkvBias);
  Value value = linear(hidden, ".self_attn.v_proj", kvHeads * headDim, model.qkvBias);
  Value positions = forward.modelInput("position_ids");
  auto frequencies = builder.getDenseF32ArrayAttr(inverseFrequencies);
  query =
      builder.create<bert::RopeOp>(named(".self_attn.rotary_q"), query.getType(), query, positions,
                                   builder.getI64IntegerAttr(model.heads), frequencies);
  key = builder.create<bert::RopeOp>(named(".self_attn.rotary_k"), key.getType(), key, positions,
                                     builder.getI64IntegerAttr(kvHeads), frequencies);
  auto queryShape = cast<RankedTensorType>(query.getType()).getShape();
  auto lseType =
      RankedTensorType::get({queryShape[0], model.heads, queryShape[1]}, builder.getF32Type());
  auto op = builder.create<bert::AttentionOp>(
      named(".self_attn.attention"), query.getType(), lseType, query, key, value,
      forward.modelInput("attention_mask"), builder.getI64IntegerAttr(model.heads),
      builder.getF32FloatAttr(model.attentionDropout), forward.nextStream(),
      /*head_chunk=*/builder.getI64IntegerAttr(0));
  op.setKvHeads(kvHeads == model.heads ? 0 : kvHeads);
  op.setCausal(true);
  return linear(op.getResult(), ".self_attn.o_proj", model.hidden, model.outputBias);
}

Value LlamaFamily::buildTaskLoss(ForwardBuilder &forward, ArrayRef<Value> hiddenStates) const {
  // task = "causal_lm", the one head of the family (FamilyConfig::tasks).
  return forward.causalLmLoss(hiddenStates.back(), wordEmbeddings(forward));
}

} // namespace

const ModelFamily &bertc::llamaFamily() {
  static const LlamaFamily family("llama");
  return family;
}

const ModelFamily &bertc::qwen2Family() {
  static const LlamaFamily family("qwen2");
  return family;
}
