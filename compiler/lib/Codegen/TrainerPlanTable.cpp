//===- TrainerPlanTable.cpp - the generated TrainerPlan of a trainer ------===//

#include "TrainerPlanTable.h"

#include "EmitContext.h"
#include "bert/BertDialect.h"
#include "bertc/Analysis/TrainModule.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// A C++ string literal of `text` ("" for a null attribute).
std::string cppString(StringAttr text) {
  std::string quoted = "\"";
  for (char c : text ? text.getValue() : StringRef()) {
    if (c == '\n') {
      quoted += "\\n";
      continue;
    }
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

/// Reads `bert.train` settings as C++ literals for the plan's initialiser.
class TrainLiterals {
public:
  explicit TrainLiterals(ModuleOp module)
      : train(module->getAttrOfType<DictionaryAttr>("bert.train")) {}

  bool valid() const { return bool(train); }

  int64_t integer(StringRef key) const {
    if (auto attr = dyn_cast_or_null<IntegerAttr>(train.get(key)))
      return attr.getInt();
    return 0;
  }
  std::string real(StringRef key) const {
    auto attr = dyn_cast_or_null<FloatAttr>(train.get(key));
    return EmitContext::floatLiteral(attr ? float(attr.getValueAsDouble()) : 0.0f);
  }
  bool boolean(StringRef key) const {
    auto attr = dyn_cast_or_null<BoolAttr>(train.get(key));
    return attr && attr.getValue();
  }
  std::string text(StringRef key) const {
    return cppString(dyn_cast_or_null<StringAttr>(train.get(key)));
  }

private:
  DictionaryAttr train;
};

/// A region of `bert.plan` as a C++ ArenaRegion initialiser.
std::string regionLiteral(ModuleOp module, StringRef key) {
  ArenaRange region = getPlanRegion(module, key);
  return "{" + std::to_string(region.offset) + ", " + std::to_string(region.bytes) + "}";
}

/// The TaskKind enumerator of `bert.train`'s task.
std::string taskKind(StringRef task) {
  if (task == "\"regression\"")
    return "TaskKind::Regression";
  if (task == "\"span\"")
    return "TaskKind::Span";
  if (task == "\"token-classification\"")
    return "TaskKind::TokenClassification";
  return "TaskKind::Classification";
}

std::string initKind(StringRef init) {
  if (init == "zeros")
    return "ParamInit::Zeros";
  if (init == "ones")
    return "ParamInit::Ones";
  return "ParamInit::Normal";
}

int64_t slotOrZero(ParamOp param, StringRef slot) {
  auto attr = param->getAttrOfType<IntegerAttr>(slot);
  return attr ? attr.getInt() : 0;
}

/// The StorageType enumerator of a parameter's element type.
std::string storageKind(Type elementType) {
  if (elementType.isBF16())
    return "StorageType::BF16";
  if (elementType.isF16())
    return "StorageType::F16";
  return "StorageType::F32";
}

/// Whether the backward's seed carries the fp16 loss scale (-bertc-mixed-precision).
bool usesLossScaling(ModuleOp module) {
  bool scaled = false;
  module.walk([&](FillOp fill) { scaled |= fill.getLossScaled(); });
  return scaled;
}

/// The offset of input `name`, or failure when @micro_step reads no such input.
FailureOr<int64_t> inputOffset(func::FuncOp microStep, StringRef name) {
  int64_t offset = -1;
  microStep.walk([&](InputOp input) {
    if (input.getName() == name)
      if (auto attr = input->getAttrOfType<DenseI64ArrayAttr>("arena.offsets"))
        offset = attr[0];
  });
  if (offset < 0)
    return microStep.emitError() << "@micro_step reads no planned input '" << name << "'";
  return offset;
}

} // namespace

void emitParamTable(func::FuncOp microStep, raw_ostream &os) {
  os << "const ParamSlot kParams[] = {\n";
  microStep.walk([&](ParamOp param) {
    auto shape = param.getResult().getType().getShape();
    os << "    {\"" << param.getName() << "\", " << shape.size() << ", {";
    llvm::interleaveComma(shape, os);
    os << "}, " << param.getResult().getType().getNumElements() << ", "
       << slotOrZero(param, "arena.value") << ", " << (param.getTrainable() ? "true" : "false")
       << ", " << slotOrZero(param, "arena.grad") << ", " << slotOrZero(param, "arena.adam_m")
       << ", " << slotOrZero(param, "arena.adam_v") << ", " << (param.getDecay() ? "true" : "false")
       << ", " << initKind(param.getInit()) << ", "
       << storageKind(param.getResult().getType().getElementType()) << ", "
       << slotOrZero(param, "arena.master") << "},\n";
  });
  os << "};\n\n";
}

LogicalResult emitPlan(ModuleOp module, func::FuncOp microStep, raw_ostream &os) {
  TrainLiterals s(module);
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (!s.valid() || !module->hasAttr("bert.plan") || failed(bounds))
    return module.emitError("module has no 'bert.train'/'bert.plan': run the pipeline first");
  SmallVector<int64_t> inputs;
  for (StringRef name :
       {"input_ids", "token_type_ids", "position_ids", "attention_mask", "labels"}) {
    FailureOr<int64_t> offset = inputOffset(microStep, name);
    if (failed(offset))
      return failure();
    inputs.push_back(*offset);
  }
  os << "} // namespace\n\n"
     << "const TrainerPlan kTrainerPlan = {\n"
     << "    .arenaBytes = " << getPlanInteger(module, "arena_bytes") << ",\n"
     << "    .params = kParams,\n"
     << "    .numParams = sizeof(kParams) / sizeof(kParams[0]),\n"
     << "    .parameters = " << regionLiteral(module, "parameters") << ",\n"
     << "    .gradients = " << regionLiteral(module, "gradients") << ",\n"
     << "    .optimizerState = " << regionLiteral(module, "optimizer_state") << ",\n"
     << "    .scratch = " << regionLiteral(module, "scratch") << ",\n"
     << "    .inputs = {" << inputs[0] << ", " << inputs[1] << ", " << inputs[2] << ", "
     << inputs[3] << ", " << inputs[4] << ", " << getPlanInteger(module, "loss") << "},\n"
     << "    .train = {\n"
     << "        .batch = " << s.integer("batch") << ",\n"
     << "        .microBatch = " << bounds->maxBatch << ",\n"
     << "        .accumulation = " << accumulationSteps(module, *bounds) << ",\n"
     << "        .seqLen = " << bounds->maxSeq << ",\n"
     << "        .epochs = " << s.integer("epochs") << ",\n"
     << "        .steps = " << s.integer("steps") << ",\n"
     << "        .lr = " << s.real("lr") << ",\n"
     << "        .weightDecay = " << s.real("weight_decay") << ",\n"
     << "        .beta1 = " << s.real("beta1") << ",\n"
     << "        .beta2 = " << s.real("beta2") << ",\n"
     << "        .eps = " << s.real("adam_eps") << ",\n"
     << "        .schedule = "
     << (s.text("schedule") == "\"constant\"" ? "LrSchedule::Constant" : "LrSchedule::Linear")
     << ",\n"
     << "        .warmup = " << s.real("warmup") << ",\n"
     << "        .seed = " << s.integer("seed") << "u,\n"
     << "        .shuffle = " << (s.boolean("shuffle") ? "true" : "false") << ",\n"
     << "        .numLabels = " << s.integer("num_labels") << ",\n"
     << "        .initializerRange = " << s.real("initializer_range") << ",\n"
     << "        .vocab = " << s.integer("vocab") << ",\n"
     << "        .typeVocab = " << s.integer("type_vocab") << ",\n"
     << "        .trainData = " << s.text("train_data") << ",\n"
     << "        .initCheckpoint = " << s.text("init_checkpoint") << ",\n"
     << "        .vocabFile = " << s.text("vocab_file") << ",\n"
     << "        .groupByLength = " << (s.boolean("group_by_length") ? "true" : "false") << ",\n"
     << "        .textField = " << s.text("text_field") << ",\n"
     << "        .textPairField = " << s.text("text_pair_field") << ",\n"
     << "        .labelField = " << s.text("label_field") << ",\n"
     << "        .task = " << taskKind(s.text("task")) << ",\n"
     << "        .evalData = " << s.text("eval_data") << ",\n"
     << "        .maxGradNorm = " << s.real("max_grad_norm") << ",\n"
     << "    },\n"
     << "    .hfConfigJson = " << cppString(module->getAttrOfType<StringAttr>("bert.hf_config"))
     << ",\n"
     << "    .masterWeights = " << regionLiteral(module, "master_weights") << ",\n"
     << "    .lossScaling = " << (usesLossScaling(module) ? "true" : "false") << ",\n"
     << "};\n\n";
  return success();
}

} // namespace bertc
