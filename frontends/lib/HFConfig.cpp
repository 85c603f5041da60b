//===- HFConfig.cpp - a Hugging Face BERT folder into a ModelSpec ---------===//
//
// `[model] from = "DIR"` starts the model from a Hugging Face checkpoint folder. Its
// config.json's model_type names the family, which reads the dimensions and dropout rates
// (FamilyConfig::readConfig); the labels are read here; model.safetensors (else a sharded
// model's model.safetensors.index.json, else pytorch_model.bin) and vocab.txt, when
// present, become the initial weights and the tokenizer vocabulary.
// Every problem is reported at the `from` key, naming the file.
//
//===----------------------------------------------------------------------===//

#include "BoundedFile.h"
#include "ConfigReader.h"
#include "FamilyConfig.h"

#include "bertc/frontend/TomlFrontend.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

using namespace bertc;
using llvm::StringRef;

namespace {

/// id2label's names by id, when it names ids 0, 1, ... each once (else none).
std::vector<std::string> labelNames(const llvm::json::Object &config) {
  const llvm::json::Object *id2label = config.getObject("id2label");
  if (!id2label)
    return {};
  std::vector<std::string> names(id2label->size());
  for (size_t id = 0; id < names.size(); ++id) {
    const llvm::json::Value *name = id2label->get(std::to_string(id));
    if (!name || !name->getAsString())
      return {};
    names[id] = name->getAsString()->str();
  }
  return names;
}

/// The family that reads `config`: its model_type's, which must be `[model] family` where
/// that is written; without a model_type, `[model] family`'s. Null after a diagnostic.
const FamilyConfig *familyOf(ConfigReader &reader, ModelSpec &model) {
  const llvm::json::Value *modelType = reader.fields().get("model_type");
  if (!modelType) {
    const FamilyConfig *family = findFamilyConfig(model.family);
    if (!family)
      reader.error() << "has no 'model_type', and 'model.family' '" << model.family
                     << "' is not a family bertc builds (" << llvm::join(modelFamilyNames(), ", ")
                     << ")";
    return family;
  }
  std::optional<StringRef> type = modelType->getAsString();
  const FamilyConfig *family = type ? findFamilyConfigOfModelType(*type) : nullptr;
  if (!family) {
    std::string written;
    llvm::raw_string_ostream(written) << *modelType;
    reader.error() << "'model_type' " << written << " is not an architecture bertc builds ("
                   << llvm::join(modelFamilyNames(), ", ") << ")";
    return nullptr;
  }
  if (model.locations.keys.count("family") && family->name != model.family) {
    reader.error() << "'model_type' \"" << *type << "\" is the '" << family->name
                   << "' family, but 'model.family' is '" << model.family << "'";
    return nullptr;
  }
  model.family = family->name.str();
  return family;
}

/// `folder`/`name` when that file exists, else an empty string.
std::string existingFile(StringRef folder, StringRef name) {
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, name);
  return llvm::sys::fs::is_regular_file(path) ? path.str().str() : std::string();
}

/// config.json's quantization_config: a bitsandbytes 4-bit NF4 folder sets
/// ModelSpec::prequantizedNf4; any other quantization is refused, naming the key.
void readQuantizationConfig(ConfigReader &reader, ModelSpec &model) {
  const llvm::json::Object *quantization = reader.readObject("quantization_config");
  if (!quantization)
    return;
  auto text = [&](StringRef key) {
    std::optional<StringRef> field = quantization->getString(key);
    return field ? field->str() : std::string();
  };
  auto flag = [&](StringRef key) { return quantization->getBoolean(key).value_or(false); };
  if (text("quant_method") != "bitsandbytes") {
    reader.error() << "'quantization_config.quant_method' \"" << text("quant_method")
                   << "\" is not one bertc reads: only bitsandbytes' 4-bit NF4 (or start from "
                      "the 16-bit model)";
    return;
  }
  if (!flag("load_in_4bit")) {
    reader.error() << "'quantization_config' holds a bitsandbytes 8-bit model, which bertc does "
                      "not read: start from the 16-bit model with [lora] base = \"int8\"";
    return;
  }
  if (std::string type = text("bnb_4bit_quant_type"); type != "nf4") {
    reader.error() << "'quantization_config.bnb_4bit_quant_type' must be \"nf4\" (bertc reads "
                      "NF4 only), got \""
                   << type << "\"";
    return;
  }
  // bertc quantizes every linear layer of the blocks and no head (the LM head, a task head,
  // as transformers' default skip list keeps them): a folder that keeps another module
  // unquantized would be trained on other weights than it holds.
  if (const llvm::json::Array *skipped = quantization->getArray("llm_int8_skip_modules"))
    for (const llvm::json::Value &module : *skipped)
      if (!llvm::is_contained({"lm_head", "classifier", "qa_outputs", "score"},
                              module.getAsString().value_or(""))) {
        std::string written;
        llvm::raw_string_ostream(written) << module;
        reader.error() << "'quantization_config.llm_int8_skip_modules' keeps " << written
                       << " unquantized, where bertc quantizes every linear layer of the model's "
                          "layers: start from the 16-bit model";
        return;
      }
  model.prequantizedNf4 = true;
  model.prequantizedDoubleQuant = flag("bnb_4bit_use_double_quant");
}

} // namespace

mlir::LogicalResult bertc::readHuggingFaceFolder(StringRef folder, mlir::FileLineColLoc fromLoc,
                                                 ModelSpec &model, HeadSpec &head) {
  llvm::SmallString<256> configPath(folder);
  llvm::sys::path::append(configPath, "config.json");
  if (!llvm::sys::fs::is_directory(folder))
    return mlir::emitError(fromLoc)
           << "cannot read '" << configPath << "': model folder '" << folder << "' does not exist";
  mlir::FailureOr<llvm::json::Object> parsed =
      readJsonObjectFile(configPath, fromLoc, "a config.json");
  if (failed(parsed))
    return mlir::failure();
  const llvm::json::Object *config = &*parsed;

  ConfigReader reader(*config, configPath, fromLoc);
  const FamilyConfig *family = familyOf(reader, model);
  if (!family)
    return mlir::failure();
  family->readConfig(reader, model, head);
  readQuantizationConfig(reader, model);
  // HF derives num_labels from id2label when only the latter is saved.
  if (config->get("num_labels")) {
    reader.readInteger("num_labels", head.labels, "labels", head.locations);
  } else if (const llvm::json::Value *id2label = config->get("id2label")) {
    if (const llvm::json::Object *labels = id2label->getAsObject()) {
      head.labels = static_cast<int64_t>(labels->size());
      head.locations.keys["labels"] = fromLoc;
      head.locations.configFields["labels"] = "id2label";
    } else {
      reader.error() << "'id2label' must be an object";
    }
  }
  if (reader.hasErrors())
    return mlir::failure();
  head.labelNames = labelNames(*config);

  model.initCheckpoint = existingFile(folder, "model.safetensors");
  if (model.initCheckpoint.empty())
    model.initCheckpoint = existingFile(folder, "model.safetensors.index.json");
  if (model.initCheckpoint.empty())
    model.initCheckpoint = existingFile(folder, "pytorch_model.bin");
  model.vocabFile = existingFile(folder, family->tokenizerFile);
  return mlir::success();
}
