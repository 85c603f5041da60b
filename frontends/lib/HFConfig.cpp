//===- HFConfig.cpp - a Hugging Face BERT folder into a ModelSpec ---------===//
//
// `[model] from = "DIR"` starts the model from a Hugging Face checkpoint folder. Its
// config.json (a BertConfig) supplies the dimensions and dropout rates; model.safetensors
// (else pytorch_model.bin) and vocab.txt, when present, become the initial weights and the
// tokenizer vocabulary.
// Every problem is reported at the `from` key, naming the file.
//
//===----------------------------------------------------------------------===//

#include "BoundedFile.h"

#include "bertc/abi/trainer.h"
#include "bertc/frontend/TomlFrontend.h"
#include "bertc/runtime/json_limits.h"

#include "mlir/IR/Diagnostics.h"
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

/// Copies BertConfig fields into spec fields, recording the `from` key as their location.
class ConfigReader {
public:
  ConfigReader(const llvm::json::Object &config, StringRef configPath, mlir::FileLineColLoc fromLoc)
      : config(config), configPath(configPath), fromLoc(fromLoc) {}

  /// Reads the integer `field` into `out` when present; `dslKey` names it in `locations`.
  void readInteger(StringRef field, int64_t &out, StringRef dslKey, KeyLocations &locations) {
    const llvm::json::Value *value = config.get(field);
    if (!value)
      return;
    if (std::optional<int64_t> integer = value->getAsInteger()) {
      out = *integer;
      locations.keys[dslKey] = fromLoc;
      locations.configFields[dslKey] = field.str();
    } else {
      error() << "'" << field << "' must be an integer";
    }
  }

  /// Reads the number `field` into `out` when present and not null; true if it did.
  bool readNumber(StringRef field, double &out, StringRef dslKey, KeyLocations &locations) {
    const llvm::json::Value *value = config.get(field);
    if (!value || value->kind() == llvm::json::Value::Null)
      return false;
    std::optional<double> number = value->getAsNumber();
    if (!number) {
      error() << "'" << field << "' must be a number";
      return false;
    }
    out = *number;
    locations.keys[dslKey] = fromLoc;
    locations.configFields[dslKey] = field.str();
    return true;
  }

  /// Fails unless the string `field` is absent or `expected` (an architecture bertc builds).
  void requireString(StringRef field, StringRef expected) {
    const llvm::json::Value *value = config.get(field);
    if (!value)
      return;
    std::optional<StringRef> actual = value->getAsString();
    if (actual && *actual == expected)
      return;
    std::string written;
    llvm::raw_string_ostream(written) << *value;
    error() << "'" << field << "' must be \"" << expected
            << "\" (the architecture bertc builds), got " << written;
  }

  /// A field that must hold `expected` when present: a setting bertc has one value of.
  void requireInteger(StringRef field, int64_t expected, StringRef why) {
    const llvm::json::Value *value = config.get(field);
    if (!value || value->getAsInteger() == expected)
      return;
    std::string written;
    llvm::raw_string_ostream(written) << *value;
    error() << "'" << field << "' must be " << expected << " (" << why << "), got " << written;
  }

  /// Reports a problem with config.json at the `from` key.
  mlir::InFlightDiagnostic error() {
    failed = true;
    mlir::InFlightDiagnostic diag = mlir::emitError(fromLoc);
    diag << "in '" << configPath << "': ";
    return diag;
  }

  bool hasErrors() const { return failed; }

private:
  const llvm::json::Object &config;
  StringRef configPath;
  mlir::FileLineColLoc fromLoc;
  bool failed = false;
};

/// `folder`/`name` when that file exists, else an empty string.
std::string existingFile(StringRef folder, StringRef name) {
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, name);
  return llvm::sys::fs::is_regular_file(path) ? path.str().str() : std::string();
}

} // namespace

mlir::LogicalResult bertc::readHuggingFaceFolder(StringRef folder, mlir::FileLineColLoc fromLoc,
                                                 ModelSpec &model, HeadSpec &head) {
  llvm::SmallString<256> configPath(folder);
  llvm::sys::path::append(configPath, "config.json");
  if (!llvm::sys::fs::is_directory(folder))
    return mlir::emitError(fromLoc)
           << "cannot read '" << configPath << "': model folder '" << folder << "' does not exist";
  llvm::Expected<std::string> bytes =
      readFileUpTo(configPath, kMaxSmallInputBytes, "a config.json");
  if (!bytes)
    return mlir::emitError(fromLoc)
           << "cannot read '" << configPath << "': " << llvm::toString(bytes.takeError());
  StringRef text = *bytes;
  // llvm::json::parse recurses per nesting level: bound the depth before it runs.
  if (std::optional<JsonLimitIssue> issue = findJsonLimitIssue({text.data(), text.size()}))
    return mlir::emitError(fromLoc) << "malformed '" << configPath << "' at line " << issue->line
                                    << ", column " << issue->column << ": " << issue->what;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return mlir::emitError(fromLoc)
           << "malformed '" << configPath << "': " << llvm::toString(parsed.takeError());
  const llvm::json::Object *config = parsed->getAsObject();
  if (!config)
    return mlir::emitError(fromLoc)
           << "malformed '" << configPath << "': expected a JSON object (a BertConfig)";

  ConfigReader reader(*config, configPath, fromLoc);
  reader.requireString("model_type", "bert");
  reader.requireString("hidden_act", "gelu");
  reader.requireString("position_embedding_type", "absolute");
  reader.requireInteger("pad_token_id", kPadTokenId,
                        "bertc pads batches with [PAD], id " + std::to_string(kPadTokenId));
  KeyLocations &locations = model.locations;
  reader.readInteger("hidden_size", model.hidden, "hidden", locations);
  reader.readInteger("num_hidden_layers", model.layers, "layers", locations);
  reader.readInteger("num_attention_heads", model.heads, "heads", locations);
  reader.readInteger("intermediate_size", model.intermediate, "intermediate", locations);
  reader.readInteger("vocab_size", model.vocab, "vocab", locations);
  reader.readInteger("max_position_embeddings", model.maxPosition, "max_position", locations);
  reader.readInteger("type_vocab_size", model.typeVocab, "type_vocab", locations);
  reader.readNumber("hidden_dropout_prob", model.dropout, "dropout", locations);
  reader.readNumber("attention_probs_dropout_prob", model.attentionDropout, "attention_dropout",
                    locations);
  reader.readNumber("layer_norm_eps", model.layerNormEps, "layer_norm_eps", locations);
  reader.readNumber("initializer_range", model.initializerRange, "initializer_range", locations);
  double classifierDropout;
  if (reader.readNumber("classifier_dropout", classifierDropout, "dropout", head.locations))
    head.dropout = classifierDropout;
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
    model.initCheckpoint = existingFile(folder, "pytorch_model.bin");
  model.vocabFile = existingFile(folder, "vocab.txt");
  return mlir::success();
}
