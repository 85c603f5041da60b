//===- TrainerPlanTable.cpp - the generated TrainerPlan of a trainer ------===//

#include "TrainerPlanTable.h"

#include "EmitContext.h"
#include "bert/BertDialect.h"
#include "bert/Placement.h"
#include "bertc/Analysis/TrainModule.h"
#include "bertc/abi/trainer.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// A C++ string literal of `text`.
std::string cppString(StringRef text) {
  std::string quoted = "\"";
  for (char c : text) {
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

// The C++ literal of a setting, by its trainer type (train_settings.def, data_settings.def).
std::string literal(int64_t value) { return std::to_string(value); }
std::string literal(uint64_t value) { return std::to_string(value) + "u"; }
std::string literal(float value) { return EmitContext::floatLiteral(value); }
std::string literal(bool value) { return value ? "true" : "false"; }
std::string literal(const char *value) { return cppString(value); }
std::string literal(LrSchedule value) {
  return value == LrSchedule::Linear ? "LrSchedule::Linear" : "LrSchedule::Constant";
}
std::string literal(TaskKind value) {
  switch (value) {
  case TaskKind::Classification:
    return "TaskKind::Classification";
  case TaskKind::Regression:
    return "TaskKind::Regression";
  case TaskKind::Span:
    return "TaskKind::Span";
  case TaskKind::TokenClassification:
    return "TaskKind::TokenClassification";
  case TaskKind::CausalLM:
    return "TaskKind::CausalLM";
  }
  llvm_unreachable("a TaskKind without a literal");
}

/// The settings the memory plan decides (train_settings.def's BERTC_PLANNED_SETTING).
struct PlannedSettings {
  int64_t microBatch, accumulation, seqLen;
};

/// The designated initialisers of TrainSettings: `train`'s values and the plan's own.
std::string trainSettingsInit(const TrainValues &train, const PlannedSettings &planned) {
  std::string init;
  llvm::raw_string_ostream os(init);
#define BERTC_SETTING(type, field, key)                                                            \
  os << "        ." #field " = " << literal(static_cast<type>(train.field)) << ",\n";
#define BERTC_PLANNED_SETTING(type, field, key)                                                    \
  os << "        ." #field " = " << literal(static_cast<type>(planned.field)) << ",\n";
#include "bertc/abi/train_settings.def"
#undef BERTC_SETTING
  return init;
}

/// The designated initialisers of JobDataSettings.
std::string dataSettingsInit(const JobDataSettings &data) {
  std::string init;
  llvm::raw_string_ostream os(init);
#define BERTC_DATA_SETTING(type, field, key, value)                                                \
  os << "        ." #field " = " << literal(data.field) << ",\n";
#include "bertc/abi/data_settings.def"
#undef BERTC_DATA_SETTING
  return init;
}

/// A region of the plan as a C++ ArenaRegion initialiser.
std::string regionLiteral(ByteRange region) {
  return "{" + std::to_string(region.offset) + ", " + std::to_string(region.bytes) + "}";
}

std::string initKind(StringRef init) {
  if (init == "zeros")
    return "ParamInit::Zeros";
  if (init == "ones")
    return "ParamInit::Ones";
  if (init == "kaiming_uniform")
    return "ParamInit::KaimingUniform";
  return "ParamInit::Normal";
}

/// A slot's offset in the trainer's ParamSlot, where 0 stands for a slot the parameter
/// does not have (trainer.h: "unused when frozen", "unused for F32 storage").
int64_t slotField(ParamOp param, ParamSlotKind slot) {
  FailureOr<int64_t> offset = getParamSlot(param, slot);
  return succeeded(offset) ? *offset : 0;
}

/// The StorageType enumerator of a parameter's value: its quantized format, else its
/// element type.
std::string storageKind(ParamOp param) {
  if (QuantizedWeightAttr quantized = param.getQuantizedAttr()) {
    switch (quantized.getFormat()) {
    case WeightFormat::Nf4:
      return "StorageType::Nf4";
    case WeightFormat::Nf4DoubleQuant:
      return "StorageType::Nf4DoubleQuant";
    case WeightFormat::Int8Rows:
      return "StorageType::Int8Rows";
    }
  }
  Type elementType = param.getResult().getType().getElementType();
  if (elementType.isBF16())
    return "StorageType::BF16";
  if (elementType.isF16())
    return "StorageType::F16";
  return "StorageType::F32";
}

/// The offset of `input`, or failure when it has none.
FailureOr<int64_t> inputOffset(InputOp input) {
  if (FailureOr<int64_t> offset = getResultOffset(input->getResult(0)); succeeded(offset))
    return *offset;
  return input.emitError() << "input '" << input.getName() << "' has no planned offset";
}

/// The padding_idx of the embedding that reads the input ids, if it has one: the id the
/// model keeps fixed, which the batches must be padded with.
std::optional<int64_t> inputIdsPadding(func::FuncOp microStep) {
  std::optional<int64_t> padding;
  microStep.walk([&](EmbeddingOp embedding) {
    auto ids = embedding.getIds().getDefiningOp<InputOp>();
    if (ids && ids.getName() == "input_ids" && embedding.getPaddingIdx())
      padding = int64_t(*embedding.getPaddingIdx());
  });
  return padding;
}

/// The padding row of each embedding table a padding_idx names, by parameter.
llvm::DenseMap<Operation *, int64_t> zeroRows(func::FuncOp microStep) {
  llvm::DenseMap<Operation *, int64_t> rows;
  microStep.walk([&](EmbeddingOp embedding) {
    if (auto param = embedding.getTable().getDefiningOp<ParamOp>())
      if (std::optional<uint64_t> row = embedding.getPaddingIdx())
        rows[param] = int64_t(*row);
  });
  return rows;
}

} // namespace

void emitParamTable(func::FuncOp microStep, raw_ostream &os) {
  llvm::StringMap<int64_t> blocks = eightBitStateBlocks(microStep->getParentOfType<ModuleOp>());
  llvm::DenseMap<Operation *, int64_t> paddingRows = zeroRows(microStep);
  os << "const ParamSlot kParams[] = {\n";
  microStep.walk([&](ParamOp param) {
    RankedTensorType valueType = param.getValueType();
    os << "    {\"" << param.getName() << "\", " << valueType.getRank() << ", {";
    llvm::interleaveComma(valueType.getShape(), os);
    os << "}, " << valueType.getNumElements() << ", " << slotField(param, ParamSlotKind::Value)
       << ", " << (param.getTrainable() ? "true" : "false") << ", "
       << slotField(param, ParamSlotKind::Grad) << ", " << slotField(param, ParamSlotKind::AdamM)
       << ", " << slotField(param, ParamSlotKind::AdamV) << ", "
       << (param.getDecay() ? "true" : "false") << ", " << initKind(param.getInit()) << ", "
       << storageKind(param) << ", " << slotField(param, ParamSlotKind::Master);
    int64_t block = blocks.lookup(param.getName());
    auto zeroRow = paddingRows.find(param.getOperation());
    bool hasZeroRow = zeroRow != paddingRows.end();
    bool transposed = param.getCheckpointTransposed();
    FloatAttr scaleAttr = param.getInitScaleAttr();
    double initScale = scaleAttr ? scaleAttr.getValueAsDouble() : 1.0;
    bool workingCopyOnly =
        !param.getResult().getType().getElementType().isF32() && !bertc::keepsFp32Master(param);
    // The trailing fields, written up to the last one that is not its default.
    struct Field {
      std::string text;
      bool isDefault;
    };
    SmallVector<Field> trailing = {
        {std::to_string(block), block == 0},
        {std::to_string(slotField(param, ParamSlotKind::AdamMAbsmax)), block == 0},
        {std::to_string(slotField(param, ParamSlotKind::AdamVAbsmax)), block == 0},
        {std::to_string(hasZeroRow ? zeroRow->second : -1), !hasZeroRow},
        {transposed ? "true" : "false", !transposed},
        {llvm::formatv("{0:e16}", initScale).str(), initScale == 1.0},
        {workingCopyOnly ? "true" : "false", !workingCopyOnly}};
    while (!trailing.empty() && trailing.back().isDefault)
      trailing.pop_back();
    for (const Field &field : trailing)
      os << ", " << field.text;
    os << "},\n";
  });
  os << "};\n\n";
}

llvm::StringMap<size_t> paramTableIndices(func::FuncOp microStep) {
  llvm::StringMap<size_t> indices;
  size_t next = 0; // every ParamOp is a row of kParams, in walk order
  microStep.walk([&](ParamOp param) { indices.try_emplace(param.getName(), next++); });
  return indices;
}

LogicalResult emitPlan(ModuleOp module, func::FuncOp microStep, const JobDataSettings &data,
                       bool planChecks, raw_ostream &os) {
  FailureOr<DimBounds> bounds = getDimBounds(module);
  FailureOr<TrainAttr> train = getTrainSettings(module);
  FailureOr<PlanAttr> plan = getPlan(module);
  if (failed(bounds) || failed(train) || failed(plan))
    return failure();
  // The model's inputs in the order @micro_step reads them; the labels apart.
  std::string modelInputs;
  std::optional<int64_t> labels;
  size_t numModelInputs = 0;
  WalkResult walked = microStep.walk([&](InputOp input) {
    FailureOr<int64_t> offset = inputOffset(input);
    if (failed(offset))
      return WalkResult::interrupt();
    if (input.getName() == "labels") {
      labels = *offset;
    } else {
      modelInputs += "    {" + cppString(input.getName()) + ", " + std::to_string(*offset) + "},\n";
      ++numModelInputs;
    }
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  if (!labels)
    return microStep.emitError() << "@micro_step reads no labels";
  os << "const InputSlot kInputs[] = {\n" << modelInputs << "};\n\n";
  // The model's pad id is its IR's (a stage read back from .mlir has no job to give it).
  JobDataSettings padded = data;
  if (std::optional<int64_t> padding = inputIdsPadding(microStep))
    padded.padTokenId = *padding;
  PlannedSettings planned{bounds->maxBatch, accumulationSteps(module, *bounds), bounds->maxSeq};
  auto hfConfig = module->getAttrOfType<StringAttr>("bert.hf_config");
  auto adapterConfig = module->getAttrOfType<StringAttr>("bert.adapter_config");
  os << "const TrainerPlan kPlan = {\n"
     << "    .arenaBytes = " << plan->getArenaBytes() << ",\n"
     << "    .params = kParams,\n"
     << "    .numParams = sizeof(kParams) / sizeof(kParams[0]),\n"
     << "    .parameters = " << regionLiteral(plan->getParameters()) << ",\n"
     << "    .gradients = " << regionLiteral(plan->getGradients()) << ",\n"
     << "    .optimizerState = " << regionLiteral(plan->getOptimizerState()) << ",\n"
     << "    .scratch = " << regionLiteral(plan->getScratch()) << ",\n"
     << "    .inputs = {kInputs, " << numModelInputs << ", " << *labels << ", " << plan->getLoss()
     << "},\n"
     << "    .train = {\n"
     << trainSettingsInit(train->getValues(), planned) << "    },\n"
     << "    .data = {\n"
     << dataSettingsInit(padded) << "    },\n"
     << "    .hfConfigJson = " << cppString(hfConfig ? hfConfig.getValue() : "") << ",\n"
     << "    .masterWeights = " << regionLiteral(plan->getMasterWeights()) << ",\n"
     << "    .lossScaling = " << (usesLossScaling(module) ? "true" : "false") << ",\n"
     << "    .planChecks = " << (planChecks ? "true" : "false") << ",\n"
     << "    .hostResident = " << regionLiteral({plan->getDeviceBytes(), plan->getHostBytes()})
     << ",\n"
     << "    .timesOps = " << (timesOps(module) ? "true" : "false") << ",\n";
  if (adapterConfig)
    os << "    .adapterConfigJson = " << cppString(adapterConfig.getValue()) << ",\n";
  if (plan->getHostActivations().bytes > 0)
    os << "    .hostActivations = " << regionLiteral(plan->getHostActivations()) << ",\n";
  if (plan->getHostParameters().bytes > 0)
    os << "    .hostParameters = " << regionLiteral(plan->getHostParameters()) << ",\n";
  os << "};\n\n";
  return success();
}

void emitTrainerEntry(StringRef steps, bool cuda, raw_ostream &os) {
  os << "const Trainer kTrainer = {kTrainerAbiVersion, &kPlan, "
     << (cuda ? "nullptr, &" + steps.str() : "&" + steps.str() + ", nullptr") << "};\n\n"
     << "} // namespace\n\n"
     << "extern \"C\" const bertc::Trainer *bertc_trainer() { return &kTrainer; }\n";
}

} // namespace bertc
