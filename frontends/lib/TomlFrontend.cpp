//===- TomlFrontend.cpp - a job's TOML file into a JobSpec ----------------===//
//
// Reading a job file takes four steps:
//   1. parse the TOML (a syntax error stops here, at TOML++'s position);
//   2. reject unknown tables, then read each table's keys with type checks; [model]
//      reads `from` first, so config.json fills the model and the TOML keys override it;
//   3. resolve every path against the TOML file's folder;
//   4. check ranges and cross-table rules (JobChecks.cpp).
// Every problem is reported, not only the first; the spec is returned only when none.
//
//===----------------------------------------------------------------------===//

#include "bertc/frontend/TomlFrontend.h"

#include "BoundedFile.h"
#include "JobReader.h"
#include "TomlSourceCheck.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace bertc;
using namespace bertc::job;
using llvm::StringRef;

std::string bertc::job::resolvePath(StringRef path, StringRef baseDir) {
  llvm::SmallString<256> resolved(path);
  if (!llvm::sys::path::is_absolute(resolved)) {
    resolved = baseDir;
    llvm::sys::path::append(resolved, path);
  }
  llvm::sys::fs::make_absolute(resolved);
  llvm::sys::path::remove_dots(resolved, /*remove_dot_dot=*/true);
  return resolved.str().str();
}

void JobReader::readModel(const toml::table *table) {
  ModelSpec &model = spec.model;
  TableReader reader(file, table, "model", kModelKeys, model.locations);
  reader.readString("family", model.family);
  std::string from;
  if (reader.readString("from", from)) {
    mlir::FileLineColLoc fromLoc = model.locations.keys["from"];
    if (from.empty()) {
      file.error(fromLoc) << "key 'model.from' must name a Hugging Face model folder";
    } else {
      model.from = resolvePath(from, baseDir);
      if (mlir::failed(readHuggingFaceFolder(model.from, fromLoc, model, spec.head)))
        file.noteFailure();
    }
  }
  bool hiddenSet = reader.readInteger("hidden", model.hidden);
  reader.readInteger("layers", model.layers);
  reader.readInteger("heads", model.heads);
  if (reader.readInteger("intermediate", model.intermediate))
    model.intermediateFromHidden = false;
  else if (hiddenSet && model.intermediateFromHidden)
    model.intermediate = 4 * model.hidden;
  reader.readInteger("vocab", model.vocab);
  reader.readInteger("max_position", model.maxPosition);
  reader.readInteger("type_vocab", model.typeVocab);
  // `dropout` sets both rates; `attention_dropout` then overrides the attention one.
  if (reader.readNumber("dropout", model.dropout)) {
    model.attentionDropout = model.dropout;
    model.locations.keys["attention_dropout"] = model.locations.keys["dropout"];
    model.locations.configFields.erase("attention_dropout");
  }
  reader.readNumber("attention_dropout", model.attentionDropout);
  reader.readNumber("layer_norm_eps", model.layerNormEps);
  reader.readNumber("initializer_range", model.initializerRange);
  reader.readInteger("kv_heads", model.kvHeads);
  reader.readInteger("head_dim", model.headDim);
  reader.readNumber("rope_theta", model.ropeTheta);
  reader.readBoolean("tie_embeddings", model.tieEmbeddings);
}

void JobReader::readHead(const toml::table *table) {
  HeadSpec &head = spec.head;
  TableReader reader(file, table, "head", kHeadKeys, head.locations);
  reader.readString("task", head.task);
  reader.readInteger("labels", head.labels);
  reader.readStrings("label_names", head.labelNames);
  double dropout;
  if (reader.readNumber("dropout", dropout))
    head.dropout = dropout;
  const toml::node *layers = reader.readNode("layers");
  if (!layers)
    return;
  const toml::array *entries = layers->as_array();
  if (!entries || !entries->is_array_of_tables()) {
    reader.reportType("layers", *layers, "an array of tables ([[head.layers]])");
    return;
  }
  for (const toml::node &entry : *entries) {
    HeadLayer layer;
    TableReader layerReader(file, entry.as_table(), "head.layers", kHeadLayerKeys, layer.locations);
    // A key written with a value of the wrong type (reported as read) makes the layer
    // malformed: its other rules would judge a value the file does not hold.
    auto note = [&](bool read, StringRef key) {
      layer.malformed |= !read && layer.locations.keys.count(key);
    };
    note(layerReader.readString("op", layer.op), "op");
    note(layerReader.readString("name", layer.name), "name");
    note(layerReader.readInteger("out", layer.out), "out");
    note(layerReader.readInteger("index", layer.index), "index");
    note(layerReader.readNumber("rate", layer.rate), "rate");
    note(layerReader.readString("as", layer.as), "as");
    note(layerReader.readString("input", layer.input), "input");
    note(layerReader.readStrings("inputs", layer.inputs), "inputs");
    note(layerReader.readInteger("start", layer.start), "start");
    note(layerReader.readInteger("end", layer.end), "end");
    if (layer.name.empty())
      layer.name = "layer" + std::to_string(head.layers.size());
    head.layers.push_back(std::move(layer));
  }
}

void JobReader::readTrain(const toml::table *table) {
  TrainSpec &train = spec.train;
  TableReader reader(file, table, "train", kTrainKeys, train.locations);
  reader.readInteger("batch", train.batch);
  reader.readInteger("seq_len", train.seqLen);
  bool hasEpochs = reader.readInteger("epochs", train.epochs);
  if (reader.readInteger("steps", train.steps) && hasEpochs)
    file.error(loc(train.locations, "steps"))
        << "set either 'train.epochs' or 'train.steps', not both";
  reader.readNumber("lr", train.lr);
  reader.readNumber("weight_decay", train.weightDecay);
  if (const toml::node *betas = reader.readNode("adam_betas")) {
    const toml::array *pair = betas->as_array();
    if (!pair) {
      reader.reportType("adam_betas", *betas, "an array of two numbers [beta1, beta2]");
    } else if (pair->size() != 2) {
      file.error(loc(train.locations, "adam_betas"))
          << "key 'train.adam_betas' must be an array of two numbers [beta1, beta2], got "
          << pair->size() << " elements";
    } else {
      double *targets[] = {&train.beta1, &train.beta2};
      for (size_t i = 0; i < 2; ++i) {
        const toml::node &beta = *pair->get(i);
        std::optional<double> value = asNumber(beta);
        if (value && !std::isfinite(*value))
          file.error(file.locate(beta.source().begin))
              << "key 'train.adam_betas' must hold finite numbers, got " << formatNumber(*value);
        else if (value)
          *targets[i] = *value;
        else
          reader.reportType("adam_betas", beta, "an array of two numbers [beta1, beta2]");
      }
    }
  }
  reader.readNumber("adam_eps", train.adamEps);
  reader.readString("schedule", train.schedule);
  reader.readNumber("warmup", train.warmup);
  reader.readNumber("max_grad_norm", train.maxGradNorm);
  reader.readString("precision", train.precision);
  if (const toml::node *freeze = reader.readNode("freeze")) {
    if (const toml::array *groups = freeze->as_array())
      for (const toml::node &entry : *groups)
        readFreezeGroup(reader, entry);
    else
      readFreezeGroup(reader, *freeze);
  }
  reader.readInteger("seed", train.seed);
  reader.readBoolean("shuffle", train.shuffle);
}

/// One entry of `freeze`: a known group name, `encoder.layer.N` with N < layers, or a range
/// of layers `encoder.layer.A-B` (A <= B < layers, both included).
void JobReader::readFreezeGroup(TableReader &reader, const toml::node &entry) {
  const auto *name = entry.as_string();
  if (!name) {
    reader.reportType("freeze", entry, "an array of group names");
    return;
  }
  StringRef group = name->get();
  mlir::FileLineColLoc entryLoc = file.locate(entry.source().begin);
  if (StringRef layers = group; layers.consume_front("encoder.layer.")) {
    auto [firstText, lastText] = layers.split('-');
    bool range = layers.contains('-');
    unsigned first, last;
    int64_t count = spec.model.layers;
    if (count > limits::kLayers)
      return; // model.layers is reported at its key; no range is expanded past the limit
    if (firstText.getAsInteger(10, first) || (range && lastText.getAsInteger(10, last)) ||
        (range ? last : first) >= count) {
      mlir::InFlightDiagnostic diag = file.error(entryLoc);
      diag << "freeze group '" << group << "' does not exist: the model has " << count << " layers";
      if (count > 0)
        diag << ", encoder.layer.0 to encoder.layer." << count - 1
             << " (or a range of them, encoder.layer.0-" << count - 1 << ")";
      return;
    }
    if (!range)
      last = first;
    if (first > last) {
      file.error(entryLoc) << "freeze range '" << group << "' runs backwards: write encoder.layer."
                           << last << "-" << first;
      return;
    }
    // "encoder.layer.01" names the group "encoder.layer.1".
    for (int64_t layer = first; layer <= int64_t(last); ++layer)
      spec.train.freeze.push_back("encoder.layer." + std::to_string(layer));
    return;
  }
  if (llvm::is_contained(kFreezeGroups, group)) {
    spec.train.freeze.push_back(group.str());
    return;
  }
  mlir::InFlightDiagnostic diag = file.error(entryLoc);
  diag << "unknown freeze group '" << group << "'";
  StringRef suggestion = closestMatch(group, kFreezeGroups);
  if (!suggestion.empty())
    diag << "; did you mean '" << suggestion << "'?";
  else
    diag << " (expected " << joinAlternatives(kFreezeGroups) << ")";
}

void JobReader::readData(const toml::table *table) {
  DataSpec &data = spec.data;
  TableReader reader(file, table, "data", kDataKeys, data.locations);
  for (auto [key, path] :
       {std::pair<StringRef, std::string *>{"train", &data.train}, {"eval", &data.eval}}) {
    if (!reader.readString(key, *path))
      continue;
    if (path->empty())
      file.error(loc(data.locations, key)) << "key 'data." << key << "' must name a file";
    else
      *path = resolvePath(*path, baseDir);
  }
  for (auto [key, field] : {std::pair<StringRef, std::string *>{"text", &data.text},
                            {"text_pair", &data.textPair},
                            {"label", &data.label}})
    if (reader.readString(key, *field) && field->empty())
      file.error(loc(data.locations, key)) << "key 'data." << key << "' must name a field";
  reader.readBoolean("group_by_length", data.groupByLength);
  reader.readBoolean("packing", data.packing);
  reader.readString("chat_template", data.chatTemplate);
  for (auto [key, setting] :
       {std::pair<StringRef, std::optional<bool> *>{"do_lower_case", &data.doLowerCase},
        {"strip_accents", &data.stripAccents},
        {"tokenize_chinese_chars", &data.tokenizeChineseChars}}) {
    bool value = false;
    if (reader.readBoolean(key, value))
      *setting = value;
  }
  for (auto [key, count] : {std::pair<StringRef, int64_t *>{"doc_stride", &data.docStride},
                            {"max_query_length", &data.maxQueryLength},
                            {"max_answer_length", &data.maxAnswerLength},
                            {"n_best", &data.nBest}})
    reader.readInteger(key, *count);
}

mlir::FailureOr<JobSpec> bertc::parseJobFile(StringRef path, mlir::MLIRContext &ctx) {
  TomlFile file(path, ctx);
  llvm::Expected<std::string> bytes = readFileUpTo(path, kMaxSmallInputBytes, "a job file");
  if (!bytes) {
    file.error(mlir::UnknownLoc::get(&ctx))
        << "cannot read '" << path << "': " << llvm::toString(bytes.takeError());
    return mlir::failure();
  }
  StringRef text = *bytes;
  if (std::optional<SourceProblem> problem = findUnsafeTomlSource(text)) {
    const TextPosition &at = problem->position;
    file.error(mlir::FileLineColLoc::get(&ctx, path, at.line, at.column)) << problem->message;
    return mlir::failure();
  }
  toml::parse_result parsed =
      toml::parse(std::string_view(text.data(), text.size()), std::string_view(path));
  if (!parsed) {
    const toml::parse_error &syntaxError = parsed.error();
    file.error(file.locate(syntaxError.source().begin)) << syntaxError.description();
    return mlir::failure();
  }
  const toml::table &root = parsed.table();

  // Step 2: unknown tables first, so that a misspelt table is named before its keys.
  for (const auto &[key, value] : root) {
    StringRef name(key.str());
    mlir::FileLineColLoc keyLoc = file.locate(key.source().begin);
    if (!llvm::is_contained(kTables, name)) {
      mlir::InFlightDiagnostic diag = file.error(keyLoc);
      diag << (value.is_table() ? "unknown table '" : "unknown key '") << name << "'";
      StringRef suggestion = closestMatch(name, kTables);
      if (!suggestion.empty())
        diag << "; did you mean '" << suggestion << "'?";
      else
        diag << " (expected the tables " << joinAlternatives(kTables) << ")";
    } else if (!value.is_table()) {
      file.error(keyLoc) << "'" << name << "' must be a table ([" << name << "])";
    }
  }

  JobSpec spec;
  spec.path = resolvePath(path, ".");
  llvm::SmallString<256> baseDir(spec.path);
  llvm::sys::path::remove_filename(baseDir);
  JobReader reader(file, baseDir, spec);
  reader.readModel(root["model"].as_table());
  reader.readHead(root["head"].as_table());
  reader.readTrain(root["train"].as_table());
  reader.readData(root["data"].as_table());
  reader.readLora(root["lora"].as_table());
  reader.checkRanges();
  if (file.hasErrors())
    return mlir::failure();
  return spec;
}
