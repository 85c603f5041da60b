//===- LoraConfig.cpp - [lora]: LoRA adapters, read, checked and saved ----===//
//
// The [lora] table (PEFT's LoraConfig: r, lora_alpha, lora_dropout, target_modules,
// use_rslora), a PEFT adapter folder it continues from (`from`: its adapter_config.json
// gives what the table leaves out), its checks, and the adapter_config.json a trained adapter
// is saved with, so that peft's PeftModel.from_pretrained loads it onto the base model.
//
//===----------------------------------------------------------------------===//

#include "BoundedFile.h"
#include "ConfigReader.h"
#include "FamilyConfig.h"
#include "JobReader.h"

#include "bertc/frontend/HFConfigWriter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <set>

namespace bertc {

double LoraSpec::scaling() const {
  return useRslora ? alpha / std::sqrt(double(rank)) : alpha / double(rank);
}

std::vector<std::string> LoraSpec::baseCandidates() const {
  if (base == kAutoBase)
    return {"", "int8", "nf4"};
  return {base};
}

namespace job {

void JobReader::readLora(const toml::table *table) {
  LoraSpec &lora = spec.lora;
  lora.enabled = table != nullptr;
  TableReader reader(file, table, "lora", kLoraKeys, lora.locations);
  reader.readInteger("r", lora.rank);
  reader.readNumber("alpha", lora.alpha);
  reader.readNumber("dropout", lora.dropout);
  reader.readBoolean("use_rslora", lora.useRslora);
  reader.readString("base", lora.base);
  reader.readBoolean("double_quant", lora.doubleQuant);
  // targets: a list of module names, or the one string "all-linear" as PEFT takes it.
  if (const toml::node *targets = reader.readNode("targets")) {
    if (const toml::value<std::string> *all = targets->as_string()) {
      if (all->get() != StringRef(kAllLinear))
        file.error(loc(lora.locations, "targets"))
            << "key 'lora.targets' must be an array of module names or \"" << kAllLinear
            << "\", got \"" << all->get() << "\"";
      else
        lora.targets = {kAllLinear};
    } else {
      reader.readStrings("targets", lora.targets);
    }
  }
  if (reader.readString("from", lora.from))
    readPeftAdapter();
  // A bitsandbytes 4-bit folder gives the base's format where the table leaves it out
  // (or leaves it to the fit driver: NF4 is the folder's only one).
  if (lora.enabled && spec.model.prequantizedNf4) {
    if (lora.base.empty() || lora.base == kAutoBase)
      lora.base = "nf4";
    if (!lora.locations.keys.count("double_quant"))
      lora.doubleQuant = spec.model.prequantizedDoubleQuant;
  }
  if (!lora.enabled || !lora.targets.empty() || lora.locations.keys.count("targets"))
    return;
  if (const FamilyConfig *family = findFamilyConfig(spec.model.family))
    for (StringRef target : family->loraTargets)
      lora.targets.push_back(target.str());
}

namespace {

/// The target_modules of an adapter_config.json: its names, or "all-linear"; a regular
/// expression (another string) is refused.
std::optional<std::vector<std::string>> targetModules(ConfigReader &config) {
  const llvm::json::Value *value = config.fields().get("target_modules");
  if (!value)
    return std::nullopt;
  if (std::optional<StringRef> text = value->getAsString()) {
    if (*text == kAllLinear)
      return std::vector<std::string>{kAllLinear};
    config.error() << "'target_modules' is the pattern \"" << *text
                   << "\", which bertc does not match: list the modules' names";
    return std::nullopt;
  }
  std::vector<std::string> names;
  if (const llvm::json::Array *list = value->getAsArray())
    for (const llvm::json::Value &entry : *list)
      if (std::optional<StringRef> name = entry.getAsString())
        names.push_back(name->str());
  if (names.empty() || names.size() != value->getAsArray()->size()) {
    config.error() << "'target_modules' must be a list of module names";
    return std::nullopt;
  }
  return names;
}

} // namespace

void JobReader::readPeftAdapter() {
  LoraSpec &lora = spec.lora;
  KeyLocations &ll = lora.locations;
  mlir::FileLineColLoc fromLoc = ll.keys["from"];
  if (lora.from.empty()) {
    file.error(fromLoc) << "key 'lora.from' must name a PEFT adapter folder";
    return;
  }
  lora.from = resolvePath(lora.from, baseDir);
  llvm::SmallString<256> configPath(lora.from), weightsPath(lora.from);
  llvm::sys::path::append(configPath, "adapter_config.json");
  llvm::sys::path::append(weightsPath, "adapter_model.safetensors");
  if (!llvm::sys::fs::is_directory(lora.from)) {
    file.error(fromLoc) << "cannot read '" << configPath << "': adapter folder '" << lora.from
                        << "' does not exist";
    return;
  }
  mlir::FailureOr<llvm::json::Object> parsed =
      readJsonObjectFile(configPath, fromLoc, "an adapter_config.json");
  if (failed(parsed)) {
    file.noteFailure();
    return;
  }
  ConfigReader config(*parsed, configPath, fromLoc);
  config.requireString("peft_type", "LORA");
  // What the adapter's tensors were trained with: its rank and layers, which a [lora] key
  // may repeat but not change.
  int64_t rank = lora.rank;
  KeyLocations read;
  config.readInteger("r", rank, "r", read);
  if (ll.keys.count("r") && rank != lora.rank)
    file.error(ll.keys["r"]) << "key 'lora.r' is " << lora.rank << ", but the adapter in '"
                             << lora.from << "' has r = " << rank;
  lora.rank = rank;
  if (std::optional<std::vector<std::string>> targets = targetModules(config)) {
    std::set<std::string> adapter(targets->begin(), targets->end());
    if (ll.keys.count("targets") &&
        std::set<std::string>(lora.targets.begin(), lora.targets.end()) != adapter)
      file.error(ll.keys["targets"])
          << "key 'lora.targets' names other layers than the adapter in '" << lora.from
          << "', which adapts " << llvm::join(*targets, ", ");
    lora.targets = *targets;
  }
  // The training settings: the table's where it sets them.
  if (!ll.keys.count("alpha"))
    config.readNumber("lora_alpha", lora.alpha, "alpha", ll);
  if (!ll.keys.count("dropout"))
    config.readNumber("lora_dropout", lora.dropout, "dropout", ll);
  if (!ll.keys.count("use_rslora"))
    config.readBool("use_rslora", lora.useRslora);
  // What bertc's adapters do not have.
  auto refuse = [&](StringRef key, bool present, StringRef why) {
    if (present)
      config.error() << "'" << key << "' " << why;
  };
  auto value = [&](StringRef key) { return parsed->get(key); };
  auto isSet = [&](StringRef key) {
    const llvm::json::Value *v = value(key);
    if (!v || v->kind() == llvm::json::Value::Null)
      return false;
    if (const llvm::json::Object *object = v->getAsObject())
      return !object->empty();
    return v->getAsBoolean() != std::optional<bool>(false);
  };
  refuse("bias", value("bias") && value("bias")->getAsString() != std::optional<StringRef>("none"),
         "must be \"none\": bertc's adapters train no biases");
  refuse("use_dora", isSet("use_dora"), "must be false: bertc trains LoRA, not DoRA");
  for (StringRef key : {"layers_to_transform", "rank_pattern", "alpha_pattern"})
    refuse(key, isSet(key), "must be empty: bertc gives every adapted layer the same r and alpha");
  if (config.hasErrors())
    file.noteFailure();
  if (!llvm::sys::fs::is_regular_file(weightsPath))
    file.error(fromLoc) << "adapter folder '" << lora.from
                        << "' has no adapter_model.safetensors (the adapters' weights)";
  else
    lora.adapterCheckpoint = weightsPath.str().str();
}

void JobReader::checkLora() {
  const LoraSpec &lora = spec.lora;
  const ModelSpec &model = spec.model;
  if (model.prequantizedNf4 && !lora.enabled)
    file.error(loc(model.locations, "from"))
        << "'" << model.from << "' is a bitsandbytes 4-bit model (its config.json's "
        << "quantization_config): its frozen weights train only LoRA adapters; add a [lora] table";
  if (!lora.enabled)
    return;
  const KeyLocations &ll = lora.locations;
  if (model.prequantizedNf4 && lora.base != "nf4")
    file.error(loc(ll, "base")) << "key 'lora.base' must be \"nf4\": '" << model.from
                                << "' holds its weights in bitsandbytes' NF4";
  else if (model.prequantizedNf4 && lora.doubleQuant != model.prequantizedDoubleQuant)
    file.error(loc(ll, "double_quant"))
        << "key 'lora.double_quant' must be " << (model.prequantizedDoubleQuant ? "true" : "false")
        << ", as '" << model.from << "' was quantized (bnb_4bit_use_double_quant)";
  // The task head trains whole beside the adapters and is saved with them (PEFT's
  // modules_to_save), which a frozen head could not be.
  for (StringRef group : {"classifier", "head"})
    if (spec.inFreezeList(group))
      file.error(loc(spec.train.locations, "freeze"))
          << "freeze group '" << group << "' in a LoRA job: the task head trains whole beside "
          << "the adapters and is saved with them (PEFT's modules_to_save); leave it out of "
          << "[train] freeze";
  requireCount(ll, "lora.r", lora.rank, limits::kLoraRank);
  if (!(lora.alpha > 0))
    file.error(loc(ll, "alpha")) << "key 'lora.alpha' must be positive, got "
                                 << formatNumber(lora.alpha);
  else
    requireFloat(ll, "lora.alpha", lora.alpha, /*zeroAllowed=*/false);
  requireRange(ll, "lora.dropout", lora.dropout, 0, 1, false);
  if (ll.keys.count("base") && lora.base != "nf4" && lora.base != "int8" && lora.base != kAutoBase)
    file.error(loc(ll, "base"))
        << "key 'lora.base' must be \"nf4\", \"int8\" or \"auto\", got \"" << lora.base
        << "\" (without it the base is stored as the precision stores every parameter)";
  if (ll.keys.count("double_quant") && lora.base != "nf4" && lora.base != kAutoBase)
    file.error(loc(ll, "double_quant"))
        << "key 'lora.double_quant' applies to base = \"nf4\" (or \"auto\") only";
  if (ll.keys.count("targets") && lora.targets.empty())
    file.error(loc(ll, "targets")) << "key 'lora.targets' must name at least one module";
  for (const std::string &target : lora.targets)
    if (target.empty() || (target == kAllLinear && lora.targets.size() > 1))
      file.error(loc(ll, "targets"))
          << "key 'lora.targets': " << (target.empty() ? "an empty module name" : "\"all-linear\"")
          << " cannot be one of several targets";
}

} // namespace job

std::string adapterConfigJson(const JobSpec &spec, llvm::ArrayRef<std::string> targetModules) {
  const LoraSpec &lora = spec.lora;
  if (!lora.enabled)
    return "";
  llvm::StringRef task = spec.head.task;
  llvm::json::Object config;
  config["peft_type"] = "LORA";
  // PEFT's task types of transformers' heads; a custom head has none.
  if (task == "causal_lm")
    config["task_type"] = "CAUSAL_LM";
  else if (task == "classification")
    config["task_type"] = "SEQ_CLS";
  else if (task == "token-classification")
    config["task_type"] = "TOKEN_CLS";
  else if (task == "span")
    config["task_type"] = "QUESTION_ANS";
  else
    config["task_type"] = nullptr;
  config["base_model_name_or_path"] =
      spec.model.from.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(spec.model.from);
  config["r"] = lora.rank;
  config["lora_alpha"] = lora.alpha;
  config["lora_dropout"] = lora.dropout;
  config["use_rslora"] = lora.useRslora;
  config["bias"] = "none";
  // GPT-2's Conv1D layers hold their weights [in, out]: PEFT merges them transposed.
  config["fan_in_fan_out"] = spec.model.family == "gpt2";
  config["init_lora_weights"] = true;
  config["inference_mode"] = true;
  config["use_dora"] = false;
  config["layers_to_transform"] = nullptr;
  config["layers_pattern"] = nullptr;
  config["rank_pattern"] = llvm::json::Object();
  config["alpha_pattern"] = llvm::json::Object();
  // The task head trains whole beside the adapters (modules_to_save), as PEFT sets it up.
  llvm::json::Value modulesToSave = nullptr;
  if (task == "classification" || task == "token-classification")
    modulesToSave = llvm::json::Array{"classifier"};
  else if (task == "span")
    modulesToSave = llvm::json::Array{"qa_outputs"};
  else if (task == "custom")
    modulesToSave = llvm::json::Array{"head"};
  config["modules_to_save"] = std::move(modulesToSave);
  llvm::json::Array targets;
  for (const std::string &target : targetModules)
    targets.push_back(target);
  config["target_modules"] = std::move(targets);
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(config))).str();
}

} // namespace bertc
