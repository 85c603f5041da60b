//===- GraphBuilder.cpp - a JobSpec into the `bert` forward graph ---------===//
//
// The training module: its settings as module attributes and @micro_step, the forward
// pass and loss of the job's model family and task (ForwardBuilder.cpp).
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
  settings.adapterCheckpoint = spec.lora.adapterCheckpoint.c_str();
  settings.vocabFile = spec.model.vocabFile.c_str();
  settings.groupByLength = data.groupByLength;
  // A custom head that flattens the tokens or selects one past [CLS] reads positions a row
  // may not have: padded to its micro-batch's longest row, what it read would depend on the
  // rows it shares the micro-batch with.
  settings.padToSeqLen = llvm::any_of(spec.head.layers, [](const HeadLayer &layer) {
    return layer.op == "flatten" || (layer.op == "select_token" && layer.index > 0);
  });
  settings.padTokenId = spec.model.padTokenId;
  settings.packing = data.packing;
  settings.chatTemplate = data.chatTemplate == "auto" ? "" : data.chatTemplate.c_str();
  settings.eosTokenId = spec.model.eosTokenIds.empty() ? -1 : spec.model.eosTokenIds.front();
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
  const ModelFamily *family = findModelFamily(spec.model.family);
  if (!family) {
    emitError(spec.model.locations.of("family", ctx))
        << "unknown model family '" << spec.model.family << "'";
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
  ForwardBuilder forward(spec, *family, builder);
  Value loss = forward.buildLoss();
  if (!loss)
    return nullptr;
  builder.create<func::ReturnOp>(loss.getLoc(), loss);
  if (spec.lora.enabled)
    (*module)->setAttr("bert.adapter_config", builder.getStringAttr(adapterConfigJson(
                                                  spec, forward.adapterTargetModules())));

  if (failed(verify(*module)))
    return nullptr;
  return module;
}
