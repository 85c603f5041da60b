//===- ForwardBuilder.cpp - the step's inputs and the blocks families build with -===//
//
// @micro_step in its order:
//   1. the family's inputs, then the task's labels;
//   2. the family's model, which gives the hidden states;
//   3. the family's head for the task, and its loss.
// Each bert.param is emitted right before its first use; dropout and attention ops get
// streams 0, 1, 2, ... in program order.
//
//===----------------------------------------------------------------------===//

#include "ForwardBuilder.h"

using namespace bertc;
using namespace mlir;

Value ForwardBuilder::buildLoss() {
  Location seqLoc = spec.train.locations.of("seq_len", ctx);
  for (StringRef name : family.inputs())
    inputs[name] = input(name, 2, seqLoc);
  labels = buildLabelsInput();
  SmallVector<Value> hiddenStates = family.buildModel(*this);
  Value loss = family.buildTaskLoss(*this, hiddenStates);
  if (!loss || failed(checkLoraTargets()))
    return nullptr;
  return loss;
}

Value ForwardBuilder::input(StringRef name, int64_t rank, Location loc) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  auto type = RankedTensorType::get(shape, builder.getI32Type());
  return builder.create<bert::InputOp>(NameLoc::get(builder.getStringAttr(name), loc), type, name);
}

Value ForwardBuilder::buildLabelsInput() {
  const HeadSpec &head = spec.head;
  Location loc = NameLoc::get(builder.getStringAttr("labels"), head.locations.of("labels", ctx));
  int64_t rows = ShapedType::kDynamic;
  RankedTensorType type = RankedTensorType::get({rows}, builder.getI32Type());
  if (head.task == "span")
    type = RankedTensorType::get({rows, 2}, builder.getI32Type());
  else if (head.task == "token-classification" || head.task == "causal_lm")
    type = RankedTensorType::get({rows, ShapedType::kDynamic}, builder.getI32Type());
  else if (head.task == "classification" && head.labels == 1)
    type = RankedTensorType::get({rows}, f32);
  return builder.create<bert::InputOp>(loc, type, "labels");
}

Value ForwardBuilder::param(const Twine &name, ArrayRef<int64_t> shape, StringRef group,
                            StringRef init, bool decay, const KeyLocations &locations,
                            StringRef key) {
  return createParam(name, shape, group, init, decay, !spec.isFrozen(group), locations, key);
}

Value ForwardBuilder::createParam(const Twine &name, ArrayRef<int64_t> shape, StringRef group,
                                  StringRef init, bool decay, bool trainable,
                                  const KeyLocations &locations, StringRef key) {
  std::string fullName = name.str();
  Value &existing = params[fullName];
  if (!existing)
    existing = builder.create<bert::ParamOp>(at(fullName, locations, key),
                                             RankedTensorType::get(shape, f32), fullName, group,
                                             trainable, decay, init,
                                             /*checkpoint_transposed=*/false,
                                             /*init_scale=*/nullptr, /*quantized=*/nullptr);
  return existing;
}

Value ForwardBuilder::linear(Value x, const Twine &module, int64_t outFeatures, StringRef group,
                             const KeyLocations &locations, StringRef key, bool bias) {
  std::string name = module.str();
  int64_t inFeatures = cast<RankedTensorType>(x.getType()).getShape().back();
  Value weight = param(name + ".weight", {outFeatures, inFeatures}, group, "normal",
                       /*decay=*/true, locations, key);
  Value biasParam =
      bias ? param(name + ".bias", {outFeatures}, group, "zeros", /*decay=*/false, locations, key)
           : Value();
  Value projected =
      builder.create<bert::LinearOp>(at(name, locations, key), withLastDim(x, outFeatures), x,
                                     baseWeight(weight, group), biasParam);
  return withAdapter(x, projected, name, group);
}

Value ForwardBuilder::conv1D(Value x, const Twine &module, int64_t outFeatures, StringRef group,
                             const KeyLocations &locations, StringRef key,
                             std::optional<double> initScale) {
  std::string name = module.str();
  int64_t inFeatures = cast<RankedTensorType>(x.getType()).getShape().back();
  Value weight = param(name + ".weight", {outFeatures, inFeatures}, group, "normal",
                       /*decay=*/true, locations, key);
  auto weightOp = weight.getDefiningOp<bert::ParamOp>();
  weightOp.setCheckpointTransposed(true);
  if (initScale)
    weightOp.setInitScaleAttr(builder.getF64FloatAttr(*initScale));
  Value bias =
      param(name + ".bias", {outFeatures}, group, "zeros", /*decay=*/false, locations, key);
  Value projected = builder.create<bert::LinearOp>(
      at(name, locations, key), withLastDim(x, outFeatures), x, baseWeight(weight, group), bias);
  return withAdapter(x, projected, name, group);
}

Value ForwardBuilder::layerNorm(Value x, const Twine &module, StringRef group,
                                const KeyLocations &locations, StringRef key) {
  std::string name = module.str();
  int64_t features = cast<RankedTensorType>(x.getType()).getShape().back();
  Value gamma = param(name + ".weight", {features}, group, "ones", /*decay=*/false, locations, key);
  Value beta = param(name + ".bias", {features}, group, "zeros", /*decay=*/false, locations, key);
  return builder.create<bert::LayerNormOp>(at(name, locations, key), x.getType(), x, gamma, beta,
                                           builder.getF32FloatAttr(model.layerNormEps));
}

Value ForwardBuilder::rmsNorm(Value x, const Twine &module, StringRef group,
                              const KeyLocations &locations, StringRef key) {
  std::string name = module.str();
  int64_t features = cast<RankedTensorType>(x.getType()).getShape().back();
  Value weight =
      param(name + ".weight", {features}, group, "ones", /*decay=*/false, locations, key);
  return builder.create<bert::RmsNormOp>(at(name, locations, key), x.getType(), x, weight,
                                         builder.getF32FloatAttr(model.layerNormEps));
}

Value ForwardBuilder::dropout(Value x, double rate, Location loc) {
  return builder.create<bert::DropoutOp>(loc, x.getType(), x, builder.getF32FloatAttr(rate),
                                         nextStream());
}

Value ForwardBuilder::crossEntropyLoss(Value logits, Location loc, float scale) {
  return builder.create<bert::CrossEntropyOp>(loc, RankedTensorType::get({}, f32), logits, labels,
                                              builder.getF32FloatAttr(scale));
}

Value ForwardBuilder::languageModelLoss(Value hidden, Value weight, Location loc) {
  // token_chunk is the planner's choice (-bertc-lower-to-target).
  return builder.create<bert::LmHeadLossOp>(loc, RankedTensorType::get({}, f32), hidden, weight,
                                            labels, builder.getI64IntegerAttr(0),
                                            builder.getF32FloatAttr(1.0f));
}

Value ForwardBuilder::causalLmLoss(Value hidden, Value wordEmbeddings) {
  const KeyLocations &hl = spec.head.locations;
  Value weight = model.tieEmbeddings ? wordEmbeddings
                                     : param("lm_head.weight", {model.vocab, model.hidden},
                                             "lm_head", "normal", /*decay=*/true, hl, "task");
  return languageModelLoss(hidden, weight, at("lm_head", hl, "task"));
}
