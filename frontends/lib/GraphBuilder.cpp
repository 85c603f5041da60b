//===- GraphBuilder.cpp - a JobSpec into the `bert` forward graph ---------===//
//
// Emits a Hugging Face BERT task model's forward + loss in its order:
//   1. the five inputs;
//   2. embeddings: (word + token_type) + position, LayerNorm, dropout;
//   3. per layer: q, k, v, attention, output dense + dropout + residual + LayerNorm,
//      intermediate dense + GELU, output dense + dropout + residual + LayerNorm;
//   4. the head: BertForSequenceClassification's pooler ([CLS] token, dense, tanh),
//      dropout, classifier and cross-entropy (MSE for labels = 1);
//      BertForQuestionAnswering's qa_outputs and the mean of the start and end
//      cross-entropies; BertForTokenClassification's dropout, classifier and per-token
//      cross-entropy; or a custom head's ops and cross-entropy.
// Each bert.param is emitted right before its first use; dropout and attention ops get
// streams 0, 1, 2, ... in program order.
//
//===----------------------------------------------------------------------===//

#include "bertc/frontend/GraphBuilder.h"
#include "bertc/frontend/HFConfigWriter.h"

#include "ForwardBuilder.h"

#include "bert/BertDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

using namespace bertc;
using namespace mlir;

Value ForwardBuilder::input(StringRef name, int64_t rank, Location loc) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  auto type = RankedTensorType::get(shape, builder.getI32Type());
  return builder.create<bert::InputOp>(NameLoc::get(builder.getStringAttr(name), loc), type, name);
}

Value ForwardBuilder::param(const Twine &name, ArrayRef<int64_t> shape, StringRef group,
                            StringRef init, bool decay, const KeyLocations &locations,
                            StringRef key) {
  std::string fullName = name.str();
  return builder.create<bert::ParamOp>(at(fullName, locations, key),
                                       RankedTensorType::get(shape, f32), fullName, group,
                                       !spec.isFrozen(group), decay, init);
}

Value ForwardBuilder::linear(Value x, const Twine &module, int64_t outFeatures, StringRef group,
                             const KeyLocations &locations, StringRef key) {
  std::string name = module.str();
  int64_t inFeatures = cast<RankedTensorType>(x.getType()).getShape().back();
  Value weight = param(name + ".weight", {outFeatures, inFeatures}, group, "normal",
                       /*decay=*/true, locations, key);
  Value bias =
      param(name + ".bias", {outFeatures}, group, "zeros", /*decay=*/false, locations, key);
  return builder.create<bert::LinearOp>(at(name, locations, key), withLastDim(x, outFeatures), x,
                                        weight, bias);
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

Value ForwardBuilder::dropout(Value x, double rate, Location loc) {
  return builder.create<bert::DropoutOp>(loc, x.getType(), x, builder.getF32FloatAttr(rate),
                                         nextStream());
}

Value ForwardBuilder::embeddings() {
  const KeyLocations &ml = model.locations;
  auto lookup = [&](Value ids, StringRef table, int64_t rows, StringRef key,
                    IntegerAttr paddingIdx = {}) -> Value {
    std::string module = ("bert.embeddings." + table).str();
    Value weight = param(module + ".weight", {rows, model.hidden}, "embeddings", "normal",
                         /*decay=*/true, ml, key);
    return builder.create<bert::EmbeddingOp>(at(module, ml, key), activationType(model.hidden), ids,
                                             weight, paddingIdx);
  };
  // HF: inputs_embeds + token_type_embeddings, then += position_embeddings. The word
  // embeddings' [PAD] row gets no gradient, as in HF's nn.Embedding(padding_idx=pad_token_id).
  Value words = lookup(inputIds, "word_embeddings", model.vocab, "vocab",
                       builder.getI64IntegerAttr(kPadTokenId));
  Value tokenTypes = lookup(tokenTypeIds, "token_type_embeddings", model.typeVocab, "type_vocab");
  Value sum = add(words, tokenTypes, at("bert.embeddings", ml, "hidden"));
  Value positions = lookup(positionIds, "position_embeddings", model.maxPosition, "max_position");
  sum = add(sum, positions, at("bert.embeddings", ml, "hidden"));
  Value normed = layerNorm(sum, "bert.embeddings.LayerNorm", "embeddings", ml, "hidden");
  return dropout(normed, model.dropout, at("bert.embeddings.dropout", ml, "dropout"));
}

Value ForwardBuilder::encoderLayer(Value hidden, Value mask, int64_t layer) {
  const KeyLocations &ml = model.locations;
  std::string prefix = "bert.encoder.layer." + std::to_string(layer);
  std::string group = "encoder.layer." + std::to_string(layer);
  auto named = [&](StringRef suffix) { return at(prefix + suffix.str(), ml, "layers"); };

  Value query = linear(hidden, prefix + ".attention.self.query", model.hidden, group, ml, "layers");
  Value key = linear(hidden, prefix + ".attention.self.key", model.hidden, group, ml, "layers");
  Value value = linear(hidden, prefix + ".attention.self.value", model.hidden, group, ml, "layers");
  auto queryShape = cast<RankedTensorType>(query.getType()).getShape();
  auto lseType =
      RankedTensorType::get({queryShape[0], model.heads, queryShape[1]}, builder.getF32Type());
  Value context =
      builder
          .create<bert::AttentionOp>(named(".attention"), query.getType(), lseType, query, key,
                                     value, mask, builder.getI64IntegerAttr(model.heads),
                                     builder.getF32FloatAttr(model.attentionDropout), nextStream(),
                                     /*head_chunk=*/builder.getI64IntegerAttr(0))
          .getResult();
  Value projected =
      linear(context, prefix + ".attention.output.dense", model.hidden, group, ml, "layers");
  projected = dropout(projected, model.dropout, named(".attention.output.dropout"));
  Value attended = layerNorm(add(projected, hidden, named(".attention.output")),
                             prefix + ".attention.output.LayerNorm", group, ml, "layers");

  Value expanded =
      linear(attended, prefix + ".intermediate.dense", model.intermediate, group, ml, "layers");
  Value activated =
      builder.create<bert::GeluOp>(named(".intermediate.gelu"), expanded.getType(), expanded);
  Value contracted = linear(activated, prefix + ".output.dense", model.hidden, group, ml, "layers");
  contracted = dropout(contracted, model.dropout, named(".output.dropout"));
  return layerNorm(add(contracted, attended, named(".output")), prefix + ".output.LayerNorm", group,
                   ml, "layers");
}

Value ForwardBuilder::classifierLoss(Value hidden) {
  const KeyLocations &ml = model.locations, &hl = spec.head.locations;
  auto clsType = RankedTensorType::get({ShapedType::kDynamic, model.hidden}, f32);
  Value cls = builder.create<bert::SelectTokenOp>(at("bert.pooler.first_token", ml, "hidden"),
                                                  clsType, hidden, builder.getI64IntegerAttr(0));
  Value dense = linear(cls, "bert.pooler.dense", model.hidden, "pooler", ml, "hidden");
  Value pooled = builder.create<bert::TanhOp>(at("bert.pooler.activation", ml, "hidden"),
                                              dense.getType(), dense);
  double rate = spec.head.dropout.value_or(model.dropout);
  pooled = dropout(pooled, rate, at("dropout", hl, spec.head.dropout ? "dropout" : "labels"));
  Value logits = linear(pooled, "classifier", spec.head.labels, "classifier", hl, "labels");
  // HF BertForSequenceClassification: num_labels == 1 is a regression (MSELoss).
  if (spec.head.labels == 1)
    return builder.create<bert::MseLossOp>(at("loss", hl, "labels"), RankedTensorType::get({}, f32),
                                           logits, labels);
  return builder.create<bert::CrossEntropyOp>(at("loss", hl, "task"),
                                              RankedTensorType::get({}, f32), logits, labels,
                                              builder.getF32FloatAttr(1.0f));
}

// HF: logits = qa_outputs(sequence_output) split into start and end logits [batch, seq];
// loss = (CE(start_logits, start_positions) + CE(end_logits, end_positions)) / 2. The
// transpose makes them two rows of one [batch, 2, seq] cross-entropy with scale 1/2.
Value ForwardBuilder::spanLoss(Value hidden) {
  const KeyLocations &hl = spec.head.locations;
  Value perToken = linear(hidden, "qa_outputs", 2, "classifier", hl, "task");
  auto startsEnds = RankedTensorType::get({ShapedType::kDynamic, 2, ShapedType::kDynamic}, f32);
  Value positions =
      builder.create<bert::TransposeOp>(at("qa_outputs.split", hl, "task"), startsEnds, perToken);
  return builder.create<bert::CrossEntropyOp>(at("loss", hl, "task"),
                                              RankedTensorType::get({}, f32), positions, labels,
                                              builder.getF32FloatAttr(0.5f));
}

// HF: logits = classifier(dropout(sequence_output)); CE over tokens, -100 ignored.
Value ForwardBuilder::tokenClassificationLoss(Value hidden) {
  const KeyLocations &hl = spec.head.locations;
  double rate = spec.head.dropout.value_or(model.dropout);
  Value dropped =
      dropout(hidden, rate, at("dropout", hl, spec.head.dropout ? "dropout" : "labels"));
  Value logits = linear(dropped, "classifier", spec.head.labels, "classifier", hl, "labels");
  return builder.create<bert::CrossEntropyOp>(at("loss", hl, "task"),
                                              RankedTensorType::get({}, f32), logits, labels,
                                              builder.getF32FloatAttr(1.0f));
}

Value ForwardBuilder::buildLoss() {
  const KeyLocations &tl = spec.train.locations;
  Location seqLoc = tl.of("seq_len", ctx);
  inputIds = input("input_ids", 2, seqLoc);
  tokenTypeIds = input("token_type_ids", 2, seqLoc);
  positionIds = input("position_ids", 2, seqLoc);
  attentionMask = input("attention_mask", 2, seqLoc);
  labels = labelsInput();

  // Hugging Face's hidden_states: the embeddings' output, then each layer's.
  SmallVector<Value> hiddenStates = {embeddings()};
  for (int64_t layer = 0; layer < model.layers; ++layer)
    hiddenStates.push_back(encoderLayer(hiddenStates.back(), attentionMask, layer));
  Value hidden = hiddenStates.back();
  const std::string &task = spec.head.task;
  if (task == "custom")
    return customHeadLoss(hiddenStates);
  if (task == "span")
    return spanLoss(hidden);
  if (task == "token-classification")
    return tokenClassificationLoss(hidden);
  return classifierLoss(hidden);
}

Value ForwardBuilder::labelsInput() {
  const HeadSpec &head = spec.head;
  Location loc = NameLoc::get(builder.getStringAttr("labels"), head.locations.of("labels", ctx));
  int64_t rows = ShapedType::kDynamic;
  RankedTensorType type = RankedTensorType::get({rows}, builder.getI32Type());
  if (head.task == "span")
    type = RankedTensorType::get({rows, 2}, builder.getI32Type());
  else if (head.task == "token-classification")
    type = RankedTensorType::get({rows, ShapedType::kDynamic}, builder.getI32Type());
  else if (head.task == "classification" && head.labels == 1)
    type = RankedTensorType::get({rows}, f32);
  return builder.create<bert::InputOp>(loc, type, "labels");
}

/// What the trainer's data and metrics follow: the TOML's task, with classification into
/// one label called regression and a custom head's [batch, labels] logits classification.
namespace {

TaskKind taskKind(const HeadSpec &head) {
  if (head.task == "classification" && head.labels == 1)
    return TaskKind::Regression;
  if (head.task == "custom")
    return TaskKind::Classification;
  return *bert::parseTaskKind(head.task);
}

/// The [train] settings the trainer is compiled with (train_settings.def).
bert::TrainAttr trainSettings(const JobSpec &spec, MLIRContext &ctx) {
  const TrainSpec &train = spec.train;
  bert::TrainValues values;
  values.batch = train.batch;
  values.epochs = train.epochs;
  values.steps = train.steps;
  values.lr = train.lr;
  values.weightDecay = train.weightDecay;
  values.beta1 = train.beta1;
  values.beta2 = train.beta2;
  values.eps = train.adamEps;
  values.schedule = *bert::parseLrSchedule(train.schedule);
  values.warmup = train.warmup;
  values.seed = uint64_t(train.seed);
  values.shuffle = train.shuffle;
  values.numLabels = spec.head.labels;
  values.initializerRange = spec.model.initializerRange;
  values.vocab = spec.model.vocab;
  values.typeVocab = spec.model.typeVocab;
  values.task = taskKind(spec.head);
  values.maxGradNorm = train.maxGradNorm;
  return bert::TrainAttr::get(&ctx, values);
}

} // namespace

JobDataSettings bertc::jobDataSettings(const JobSpec &spec) {
  // A tokenizer setting the job leaves to tokenizer_config.json is -1.
  auto choice = [](std::optional<bool> value) { return value ? int64_t(*value) : -1; };
  const DataSpec &data = spec.data;
  JobDataSettings settings;
  settings.trainData = data.train.c_str();
  settings.evalData = data.eval.c_str();
  settings.initCheckpoint = spec.model.initCheckpoint.c_str();
  settings.vocabFile = spec.model.vocabFile.c_str();
  settings.groupByLength = data.groupByLength;
  // A custom head that flattens the tokens or selects one past [CLS] reads positions a row
  // may not have: padded to its micro-batch's longest row, what it read would depend on the
  // rows it shares the micro-batch with.
  settings.padToSeqLen = llvm::any_of(spec.head.layers, [](const HeadLayer &layer) {
    return layer.op == "flatten" || (layer.op == "select_token" && layer.index > 0);
  });
  settings.textField = data.text.c_str();
  settings.textPairField = data.textPair.c_str();
  settings.labelField = data.label.c_str();
  settings.doLowerCase = choice(data.doLowerCase);
  settings.stripAccents = choice(data.stripAccents);
  settings.tokenizeChineseChars = choice(data.tokenizeChineseChars);
  settings.docStride = data.docStride;
  settings.maxQueryLength = data.maxQueryLength;
  settings.maxAnswerLength = data.maxAnswerLength;
  settings.nBest = data.nBest;
  return settings;
}

OwningOpRef<ModuleOp> bertc::buildTrainGraph(const JobSpec &spec, int64_t microBatch,
                                             MLIRContext &ctx) {
  ctx.loadDialect<bert::BertDialect, func::FuncDialect>();
  if (microBatch < 1 || microBatch > spec.train.batch) {
    emitError(spec.train.locations.of("batch", ctx))
        << "micro-batch " << microBatch << " must be in [1, " << spec.train.batch
        << "] (the batch per optimizer step)";
    return nullptr;
  }
  Location fileLoc = spec.train.locations.file ? Location(spec.train.locations.file)
                                               : Location(UnknownLoc::get(&ctx));
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  OpBuilder builder(&ctx);
  (*module)->setAttr("bert.max_batch", builder.getI64IntegerAttr(microBatch));
  (*module)->setAttr("bert.max_seq", builder.getI64IntegerAttr(spec.train.seqLen));
  (*module)->setAttr("bert.train", trainSettings(spec, ctx));
  (*module)->setAttr("bert.hf_config", builder.getStringAttr(huggingFaceConfigJson(spec)));

  builder.setInsertionPointToEnd(module->getBody());
  auto lossType = RankedTensorType::get({}, builder.getF32Type());
  auto microStep =
      builder.create<func::FuncOp>(NameLoc::get(builder.getStringAttr("micro_step"), fileLoc),
                                   "micro_step", builder.getFunctionType({}, {lossType}));
  builder.setInsertionPointToStart(microStep.addEntryBlock());
  ForwardBuilder forward(spec, builder);
  Value loss = forward.buildLoss();
  if (!loss)
    return nullptr;
  builder.create<func::ReturnOp>(loss.getLoc(), loss);

  if (failed(verify(*module)))
    return nullptr;
  return module;
}
