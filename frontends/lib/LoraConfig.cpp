//===- LoraConfig.cpp - [lora]: LoRA adapters, read, checked and saved ----===//
//
// The [lora] table (PEFT's LoraConfig: r, lora_alpha, lora_dropout, target_modules,
// use_rslora), its checks, and the adapter_config.json a trained adapter is saved with, so
// that peft's PeftModel.from_pretrained loads it onto the base model.
//
//===----------------------------------------------------------------------===//

#include "FamilyConfig.h"
#include "JobReader.h"

#include "bertc/frontend/HFConfigWriter.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>

namespace bertc {

double LoraSpec::scaling() const {
  return useRslora ? alpha / std::sqrt(double(rank)) : alpha / double(rank);
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
  if (!lora.enabled || lora.locations.keys.count("targets"))
    return;
  if (const FamilyConfig *family = findFamilyConfig(spec.model.family))
    for (StringRef target : family->loraTargets)
      lora.targets.push_back(target.str());
}

void JobReader::checkLora() {
  const LoraSpec &lora = spec.lora;
  if (!lora.enabled)
    return;
  const KeyLocations &ll = lora.locations;
  requireCount(ll, "lora.r", lora.rank, limits::kLoraRank);
  if (!(lora.alpha > 0))
    file.error(loc(ll, "alpha")) << "key 'lora.alpha' must be positive, got "
                                 << formatNumber(lora.alpha);
  else
    requireFloat(ll, "lora.alpha", lora.alpha, /*zeroAllowed=*/false);
  requireRange(ll, "lora.dropout", lora.dropout, 0, 1, false);
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
