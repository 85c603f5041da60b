//===- BertFamily.cpp - BERT: the encoder and its pooler head ------------===//
//
// Hugging Face's BERT (modeling_bert.py; its config.json is BertConfig.cpp's):
//   1. inputs: input_ids, token_type_ids, position_ids, attention_mask;
//   2. embeddings: (word + token_type) + position, LayerNorm, dropout;
//   3. per layer: q, k, v, attention, output dense + dropout + residual + LayerNorm,
//      intermediate dense + GELU, output dense + dropout + residual + LayerNorm;
//   4. task = "classification": BertForSequenceClassification's pooler ([CLS] token, dense,
//      tanh), dropout, classifier and cross-entropy (MSE for labels = 1); the other tasks'
//      heads are the shared ones (TaskHeads.cpp, CustomHeadBuilder.cpp).
//
//===----------------------------------------------------------------------===//

#include "ForwardBuilder.h"

using namespace bertc;
using namespace mlir;

namespace {

class BertFamily final : public ModelFamily {
public:
  StringRef name() const override { return "bert"; }
  ArrayRef<StringRef> inputs() const override {
    static const StringRef names[] = {"input_ids", "token_type_ids", "position_ids",
                                      "attention_mask"};
    return names;
  }
  SmallVector<Value> buildModel(ForwardBuilder &forward) const override;
  Value buildTaskLoss(ForwardBuilder &forward, ArrayRef<Value> hiddenStates) const override;

private:
  Value embeddings(ForwardBuilder &forward) const;
  Value encoderLayer(ForwardBuilder &forward, Value hidden, int64_t layer) const;
  Value classifierLoss(ForwardBuilder &forward, Value hidden) const;
};

SmallVector<Value> BertFamily::buildModel(ForwardBuilder &forward) const {
  SmallVector<Value> hiddenStates = {embeddings(forward)};
  for (int64_t layer = 0; layer < forward.job().model.layers; ++layer)
    hiddenStates.push_back(encoderLayer(forward, hiddenStates.back(), layer));
  return hiddenStates;
}

Value BertFamily::buildTaskLoss(ForwardBuilder &forward, ArrayRef<Value> hiddenStates) const {
  const std::string &task = forward.job().head.task;
  if (task == "custom")
    return forward.customHeadLoss(hiddenStates);
  if (task == "span")
    return forward.spanLoss(hiddenStates.back());
  if (task == "token-classification")
    return forward.tokenClassificationLoss(hiddenStates.back());
  return classifierLoss(forward, hiddenStates.back());
}

Value BertFamily::embeddings(ForwardBuilder &forward) const {
  const ModelSpec &model = forward.job().model;
  const KeyLocations &ml = model.locations;
  OpBuilder &builder = forward.opBuilder();
  auto lookup = [&](StringRef input, StringRef table, int64_t rows, StringRef key,
                    IntegerAttr paddingIdx = {}) -> Value {
    std::string module = ("bert.embeddings." + table).str();
    Value weight = forward.param(module + ".weight", {rows, model.hidden}, "embeddings", "normal",
                                 /*decay=*/true, ml, key);
    return builder.create<bert::EmbeddingOp>(forward.at(module, ml, key),
                                             forward.activationType(model.hidden),
                                             forward.modelInput(input), weight, paddingIdx);
  };
  // HF: inputs_embeds + token_type_embeddings, then += position_embeddings. The word
  // embeddings' [PAD] row gets no gradient, as in HF's nn.Embedding(padding_idx=pad_token_id).
  Value words = lookup("input_ids", "word_embeddings", model.vocab, "vocab",
                       builder.getI64IntegerAttr(model.padTokenId));
  Value tokenTypes =
      lookup("token_type_ids", "token_type_embeddings", model.typeVocab, "type_vocab");
  Value sum = forward.add(words, tokenTypes, forward.at("bert.embeddings", ml, "hidden"));
  Value positions =
      lookup("position_ids", "position_embeddings", model.maxPosition, "max_position");
  sum = forward.add(sum, positions, forward.at("bert.embeddings", ml, "hidden"));
  Value normed = forward.layerNorm(sum, "bert.embeddings.LayerNorm", "embeddings", ml, "hidden");
  return forward.dropout(normed, model.dropout,
                         forward.at("bert.embeddings.dropout", ml, "dropout"));
}

Value BertFamily::encoderLayer(ForwardBuilder &forward, Value hidden, int64_t layer) const {
  const ModelSpec &model = forward.job().model;
  const KeyLocations &ml = model.locations;
  OpBuilder &builder = forward.opBuilder();
  std::string prefix = "bert.encoder.layer." + std::to_string(layer);
  std::string group = "encoder.layer." + std::to_string(layer);
  auto named = [&](StringRef suffix) { return forward.at(prefix + suffix.str(), ml, "layers"); };
  auto linear = [&](Value x, StringRef module, int64_t outFeatures) {
    return forward.linear(x, prefix + module.str(), outFeatures, group, ml, "layers");
  };

  Value query = linear(hidden, ".attention.self.query", model.hidden);
  Value key = linear(hidden, ".attention.self.key", model.hidden);
  Value value = linear(hidden, ".attention.self.value", model.hidden);
  auto queryShape = cast<RankedTensorType>(query.getType()).getShape();
  auto lseType =
      RankedTensorType::get({queryShape[0], model.heads, queryShape[1]}, builder.getF32Type());
  Value context =
      builder
          .create<bert::AttentionOp>(
              named(".attention"), query.getType(), lseType, query, key, value,
              forward.modelInput("attention_mask"), builder.getI64IntegerAttr(model.heads),
              builder.getF32FloatAttr(model.attentionDropout), forward.nextStream(),
              /*head_chunk=*/builder.getI64IntegerAttr(0))
          .getResult();
  Value projected = linear(context, ".attention.output.dense", model.hidden);
  projected = forward.dropout(projected, model.dropout, named(".attention.output.dropout"));
  Value attended = forward.layerNorm(forward.add(projected, hidden, named(".attention.output")),
                                     prefix + ".attention.output.LayerNorm", group, ml, "layers");

  Value expanded = linear(attended, ".intermediate.dense", model.intermediate);
  Value activated =
      builder.create<bert::GeluOp>(named(".intermediate.gelu"), expanded.getType(), expanded);
  Value contracted = linear(activated, ".output.dense", model.hidden);
  contracted = forward.dropout(contracted, model.dropout, named(".output.dropout"));
  return forward.layerNorm(forward.add(contracted, attended, named(".output")),
                           prefix + ".output.LayerNorm", group, ml, "layers");
}

Value BertFamily::classifierLoss(ForwardBuilder &forward, Value hidden) const {
  const JobSpec &spec = forward.job();
  const ModelSpec &model = spec.model;
  const KeyLocations &ml = model.locations, &hl = spec.head.locations;
  OpBuilder &builder = forward.opBuilder();
  Type f32 = builder.getF32Type();
  auto clsType = RankedTensorType::get({ShapedType::kDynamic, model.hidden}, f32);
  Value cls =
      builder.create<bert::SelectTokenOp>(forward.at("bert.pooler.first_token", ml, "hidden"),
                                          clsType, hidden, builder.getI64IntegerAttr(0));
  Value dense = forward.linear(cls, "bert.pooler.dense", model.hidden, "pooler", ml, "hidden");
  Value pooled = builder.create<bert::TanhOp>(forward.at("bert.pooler.activation", ml, "hidden"),
                                              dense.getType(), dense);
  double rate = spec.head.dropout.value_or(model.dropout);
  pooled = forward.dropout(pooled, rate,
                           forward.at("dropout", hl, spec.head.dropout ? "dropout" : "labels"));
  Value logits = forward.linear(pooled, "classifier", spec.head.labels, "classifier", hl, "labels");
  // HF BertForSequenceClassification: num_labels == 1 is a regression (MSELoss).
  if (spec.head.labels == 1)
    return builder.create<bert::MseLossOp>(forward.at("loss", hl, "labels"),
                                           RankedTensorType::get({}, f32), logits,
                                           forward.labelsInput());
  return forward.crossEntropyLoss(logits, forward.at("loss", hl, "task"));
}

} // namespace

const ModelFamily &bertc::bertFamily() {
  static const BertFamily family;
  return family;
}
