//===- TrainerPlanTable.cpp - the generated TrainerPlan of a trainer ------===//

#include "TrainerPlanTable.h"

#include "EmitContext.h"
#include "bert/BertDialect.h"
#include "bertc/Analysis/TrainModule.h"
#include "bertc/abi/trainer.h"
#include "llvm/ADT/StringMap.h"

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

/// C++ literals of the trainer's settings: `bert.train`'s values, and the plan's own for
/// the keys it decides (micro_batch, accumulation, seq_len). A key missing from both, or a
/// value of another kind than its field's, is an error on the module.
class SettingLiterals {
public:
  SettingLiterals(ModuleOp module, DimBounds bounds)
      : module(module), train(module->getAttrOfType<DictionaryAttr>("bert.train")) {
    planned["micro_batch"] = bounds.maxBatch;
    planned["accumulation"] = accumulationSteps(module, bounds);
    planned["seq_len"] = bounds.maxSeq;
  }

  /// The literal of field `key` of C++ type T, or failure (reported).
  template <typename T> FailureOr<std::string> literal(StringRef key) const;

private:
  template <typename A> FailureOr<A> value(StringRef key, StringRef kind) const {
    if (auto attr = dyn_cast_or_null<A>(train.get(key)))
      return attr;
    return module.emitError() << "'bert.train' has no " << kind << " '" << key
                              << "', which the trainer's settings need";
  }
  FailureOr<int64_t> integer(StringRef key) const {
    if (auto it = planned.find(key); it != planned.end())
      return it->second;
    FailureOr<IntegerAttr> attr = value<IntegerAttr>(key, "integer");
    return failed(attr) ? FailureOr<int64_t>(failure()) : attr->getInt();
  }
  FailureOr<std::string> text(StringRef key) const {
    FailureOr<StringAttr> attr = value<StringAttr>(key, "string");
    return failed(attr) ? FailureOr<std::string>(failure()) : attr->getValue().str();
  }
  /// The enumerator of `key`'s string among `names` (`enumType`::`enumerators`).
  FailureOr<std::string> enumerator(StringRef key, StringRef enumType,
                                    ArrayRef<std::pair<StringRef, StringRef>> names) const {
    FailureOr<std::string> name = text(key);
    if (failed(name))
      return failure();
    for (auto [spelling, enumerator] : names)
      if (*name == spelling)
        return (enumType + "::" + enumerator).str();
    return module.emitError() << "'bert.train' " << key << " '" << *name << "' is not a "
                              << enumType;
  }

  mutable ModuleOp module; // emitError is not const
  DictionaryAttr train;
  llvm::StringMap<int64_t> planned;
};

template <> FailureOr<std::string> SettingLiterals::literal<int64_t>(StringRef key) const {
  FailureOr<int64_t> value = integer(key);
  return failed(value) ? FailureOr<std::string>(failure()) : std::to_string(*value);
}
template <> FailureOr<std::string> SettingLiterals::literal<uint64_t>(StringRef key) const {
  FailureOr<int64_t> value = integer(key);
  return failed(value) ? FailureOr<std::string>(failure()) : std::to_string(uint64_t(*value)) + "u";
}
template <> FailureOr<std::string> SettingLiterals::literal<float>(StringRef key) const {
  FailureOr<FloatAttr> attr = value<FloatAttr>(key, "number");
  return failed(attr) ? FailureOr<std::string>(failure())
                      : EmitContext::floatLiteral(float(attr->getValueAsDouble()));
}
template <> FailureOr<std::string> SettingLiterals::literal<bool>(StringRef key) const {
  FailureOr<BoolAttr> attr = value<BoolAttr>(key, "boolean");
  return failed(attr) ? FailureOr<std::string>(failure())
                      : std::string(attr->getValue() ? "true" : "false");
}
template <> FailureOr<std::string> SettingLiterals::literal<const char *>(StringRef key) const {
  FailureOr<StringAttr> attr = value<StringAttr>(key, "string");
  return failed(attr) ? FailureOr<std::string>(failure()) : cppString(*attr);
}
template <> FailureOr<std::string> SettingLiterals::literal<LrSchedule>(StringRef key) const {
  return enumerator(key, "LrSchedule", {{"constant", "Constant"}, {"linear", "Linear"}});
}
template <> FailureOr<std::string> SettingLiterals::literal<TaskKind>(StringRef key) const {
  return enumerator(key, "TaskKind",
                    {{"classification", "Classification"},
                     {"regression", "Regression"},
                     {"span", "Span"},
                     {"token-classification", "TokenClassification"}});
}

/// A region of `bert.plan` as a C++ ArenaRegion initialiser.
std::string regionLiteral(ModuleOp module, StringRef key) {
  ArenaRange region = getPlanRegion(module, key);
  return "{" + std::to_string(region.offset) + ", " + std::to_string(region.bytes) + "}";
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

LogicalResult emitPlan(ModuleOp module, func::FuncOp microStep, bool planChecks, raw_ostream &os) {
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (!module->hasAttr("bert.train") || !module->hasAttr("bert.plan") || failed(bounds))
    return module.emitError("module has no 'bert.train'/'bert.plan': run the pipeline first");
  SmallVector<int64_t> inputs;
  for (StringRef name :
       {"input_ids", "token_type_ids", "position_ids", "attention_mask", "labels"}) {
    FailureOr<int64_t> offset = inputOffset(microStep, name);
    if (failed(offset))
      return failure();
    inputs.push_back(*offset);
  }
  std::string settings;
  llvm::raw_string_ostream settingsOs(settings);
  SettingLiterals literals(module, *bounds);
  bool missing = false;
#define BERTC_SETTING(type, field, key)                                                            \
  if (FailureOr<std::string> value = literals.literal<type>(key); succeeded(value))                \
    settingsOs << "        ." #field " = " << *value << ",\n";                                     \
  else                                                                                             \
    missing = true;
#include "bertc/abi/train_settings.def"
#undef BERTC_SETTING
  if (missing)
    return failure();
  os << "const TrainerPlan kPlan = {\n"
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
     << settings << "    },\n"
     << "    .hfConfigJson = " << cppString(module->getAttrOfType<StringAttr>("bert.hf_config"))
     << ",\n"
     << "    .masterWeights = " << regionLiteral(module, "master_weights") << ",\n"
     << "    .lossScaling = " << (usesLossScaling(module) ? "true" : "false") << ",\n"
     << "    .planChecks = " << (planChecks ? "true" : "false") << ",\n"
     << "};\n\n";
  return success();
}

void emitTrainerEntry(StringRef steps, bool cuda, raw_ostream &os) {
  os << "const Trainer kTrainer = {kTrainerAbiVersion, &kPlan, "
     << (cuda ? "nullptr, &" + steps.str() : "&" + steps.str() + ", nullptr") << "};\n\n"
     << "} // namespace\n\n"
     << "extern \"C\" const bertc::Trainer *bertc_trainer() { return &kTrainer; }\n";
}

} // namespace bertc
