//===- HFConfigWriter.cpp - a job's model as a Hugging Face config --------===//
//
// The fields every family shares (the labels' names but a causal LM's, the head's dropout,
// the problem type); the family adds its own (FamilyConfig::writeConfig).
//
//===----------------------------------------------------------------------===//

#include "bertc/frontend/HFConfigWriter.h"

#include "FamilyConfig.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace bertc {

std::string huggingFaceConfigJson(const JobSpec &spec) {
  llvm::json::Object config;
  // A causal LM's classes are its vocabulary: it has no labels to name.
  if (spec.head.task != "causal_lm") {
    // The names of the `from` folder's classes where they are as many, else HF's defaults.
    const std::vector<std::string> &names = spec.head.labelNames;
    bool named = int64_t(names.size()) == spec.head.labels;
    llvm::json::Object id2label, label2id;
    for (int64_t i = 0; i < spec.head.labels; ++i) {
      std::string name = named ? names[size_t(i)] : "LABEL_" + std::to_string(i);
      id2label[std::to_string(i)] = name;
      label2id[name] = i;
    }
    config["id2label"] = std::move(id2label);
    config["label2id"] = std::move(label2id);
  }
  findFamilyConfig(spec.model.family)->writeConfig(spec, config);
  if (spec.head.dropout)
    config["classifier_dropout"] = *spec.head.dropout;
  if (spec.head.task == "classification" && spec.head.labels == 1)
    config["problem_type"] = "regression";
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(config))).str();
}

} // namespace bertc
