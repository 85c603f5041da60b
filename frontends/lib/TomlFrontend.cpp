//===- TomlFrontend.cpp - a job's TOML file into a JobSpec ----------------===//
//
// Reading a job file takes four steps:
//   1. parse the TOML (a syntax error stops here, at TOML++'s position);
//   2. reject unknown tables, then read each table's keys with type checks; [model]
//      reads `from` first, so config.json fills the model and the TOML keys override it;
//   3. resolve every path against the TOML file's folder;
//   4. check ranges and cross-table rules (hidden % heads, seq_len <= max_position).
// Every problem is reported, not only the first; the spec is returned only when none.
//
//===----------------------------------------------------------------------===//

#include "bertc/frontend/TomlFrontend.h"

#include "TomlTable.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace bertc;
using llvm::StringRef;

namespace {

constexpr StringRef kTables[] = {"model", "head", "train", "data"};
constexpr StringRef kModelKeys[] = {"family",
                                    "from",
                                    "hidden",
                                    "layers",
                                    "heads",
                                    "intermediate",
                                    "vocab",
                                    "max_position",
                                    "type_vocab",
                                    "dropout",
                                    "attention_dropout",
                                    "layer_norm_eps",
                                    "initializer_range"};
constexpr StringRef kHeadKeys[] = {"task", "labels", "dropout", "layers"};
constexpr StringRef kHeadLayerKeys[] = {"op", "name", "out", "index", "rate"};
constexpr StringRef kHeadLayerOps[] = {"flatten", "select_token", "linear", "gelu", "tanh",
                                      "dropout"};
constexpr StringRef kTrainKeys[] = {"batch",        "seq_len",    "epochs",   "steps",    "lr",
                                    "weight_decay", "adam_betas", "adam_eps", "schedule", "warmup",
                                    "precision",    "freeze",     "seed",     "shuffle"};
constexpr StringRef kDataKeys[] = {"train", "eval", "text", "text_pair", "label",
                                   "group_by_length"};

constexpr StringRef kTasks[] = {"classification", "span", "token-classification", "custom"};
constexpr StringRef kSchedules[] = {"linear", "constant"};
constexpr StringRef kPrecisions[] = {"auto", "fp32", "bf16", "fp16"};
constexpr StringRef kFreezeGroups[] = {"embeddings", "encoder", "encoder.layer.N", "pooler",
                                       "classifier", "head"};

/// `path` made absolute, a relative one taken from `baseDir`, without `.` and `..`.
std::string resolvePath(StringRef path, StringRef baseDir) {
  llvm::SmallString<256> resolved(path);
  if (!llvm::sys::path::is_absolute(resolved)) {
    resolved = baseDir;
    llvm::sys::path::append(resolved, path);
  }
  llvm::sys::fs::make_absolute(resolved);
  llvm::sys::path::remove_dots(resolved, /*remove_dot_dot=*/true);
  return resolved.str().str();
}

/// Reads the tables of one job file into a JobSpec, reporting through `file`.
class JobReader {
public:
  JobReader(TomlFile &file, StringRef baseDir, JobSpec &spec)
      : file(file), baseDir(baseDir), spec(spec) {}

  void readModel(const toml::table *table);
  void readHead(const toml::table *table);
  void readTrain(const toml::table *table);
  void readData(const toml::table *table);
  void checkRanges();

private:
  void checkTaskHead();
  void readFreezeGroup(TableReader &reader, const toml::node &entry);
  mlir::Location loc(const KeyLocations &locations, StringRef key) {
    return locations.of(key, file.context());
  }
  void requirePositive(const KeyLocations &locations, StringRef name, int64_t value);
  void requireRange(const KeyLocations &locations, StringRef name, double value, double low,
                    double high, bool highIncluded);
  void requireChoice(const KeyLocations &locations, StringRef name, StringRef value,
                     llvm::ArrayRef<StringRef> choices);

  TomlFile &file;
  StringRef baseDir;
  JobSpec &spec;
};

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
  reader.readInteger("hidden", model.hidden);
  reader.readInteger("layers", model.layers);
  reader.readInteger("heads", model.heads);
  reader.readInteger("intermediate", model.intermediate);
  reader.readInteger("vocab", model.vocab);
  reader.readInteger("max_position", model.maxPosition);
  reader.readInteger("type_vocab", model.typeVocab);
  // `dropout` sets both rates; `attention_dropout` then overrides the attention one.
  if (reader.readNumber("dropout", model.dropout)) {
    model.attentionDropout = model.dropout;
    model.locations.keys["attention_dropout"] = model.locations.keys["dropout"];
  }
  reader.readNumber("attention_dropout", model.attentionDropout);
  reader.readNumber("layer_norm_eps", model.layerNormEps);
  reader.readNumber("initializer_range", model.initializerRange);
}

void JobReader::readHead(const toml::table *table) {
  HeadSpec &head = spec.head;
  TableReader reader(file, table, "head", kHeadKeys, head.locations);
  reader.readString("task", head.task);
  reader.readInteger("labels", head.labels);
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
    TableReader layerReader(file, entry.as_table(), "head.layers", kHeadLayerKeys,
                            layer.locations);
    layerReader.readString("op", layer.op);
    layerReader.readString("name", layer.name);
    layerReader.readInteger("out", layer.out);
    layerReader.readInteger("index", layer.index);
    layerReader.readNumber("rate", layer.rate);
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
        if (std::optional<double> value = asNumber(beta))
          *targets[i] = *value;
        else
          reader.reportType("adam_betas", beta, "an array of two numbers [beta1, beta2]");
      }
    }
  }
  reader.readNumber("adam_eps", train.adamEps);
  reader.readString("schedule", train.schedule);
  reader.readNumber("warmup", train.warmup);
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

/// One entry of `freeze`: a known group name, `encoder.layer.N` with N < layers.
void JobReader::readFreezeGroup(TableReader &reader, const toml::node &entry) {
  const auto *name = entry.as_string();
  if (!name) {
    reader.reportType("freeze", entry, "an array of group names");
    return;
  }
  StringRef group = name->get();
  mlir::FileLineColLoc entryLoc = file.locate(entry.source().begin);
  if (StringRef index = group; index.consume_front("encoder.layer.")) {
    unsigned layer;
    if (index.getAsInteger(10, layer) || layer >= spec.model.layers) {
      file.error(entryLoc) << "freeze group '" << group << "' does not exist: the model has "
                           << spec.model.layers << " layers, encoder.layer.0 to encoder.layer."
                           << spec.model.layers - 1;
      return;
    }
    // "encoder.layer.01" names the group "encoder.layer.1".
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
}

void JobReader::requirePositive(const KeyLocations &locations, StringRef name, int64_t value) {
  if (value < 1)
    file.error(loc(locations, name.rsplit('.').second))
        << "key '" << name << "' must be positive, got " << value;
}

void JobReader::requireRange(const KeyLocations &locations, StringRef name, double value,
                             double low, double high, bool highIncluded) {
  if (value >= low && (highIncluded ? value <= high : value < high))
    return;
  file.error(loc(locations, name.rsplit('.').second))
      << "key '" << name << "' must be in [" << formatNumber(low) << ", " << formatNumber(high)
      << (highIncluded ? "]" : ")") << ", got " << formatNumber(value);
}

void JobReader::requireChoice(const KeyLocations &locations, StringRef name, StringRef value,
                              llvm::ArrayRef<StringRef> choices) {
  if (llvm::is_contained(choices, value))
    return;
  mlir::InFlightDiagnostic diag = file.error(loc(locations, name.rsplit('.').second));
  diag << "key '" << name << "' must be " << joinAlternatives(choices) << ", got '" << value << "'";
  StringRef suggestion = closestMatch(value, choices);
  if (!suggestion.empty())
    diag << "; did you mean '" << suggestion << "'?";
}

/// The rules of the span and token-classification heads: a span head has exactly two
/// outputs (start, end) and reads SQuAD JSON; a token classifier needs two labels or more
/// and reads JSONL rows of words and tags ([data] text and label default to "tokens" and
/// "ner_tags", the Hugging Face datasets' names).
void JobReader::checkTaskHead() {
  HeadSpec &head = spec.head;
  const KeyLocations &hl = head.locations;
  DataSpec &data = spec.data;
  bool labelsWritten = hl.keys.count("labels");
  auto extensionOf = [](StringRef path) { return llvm::sys::path::extension(path).lower(); };
  if (head.task == "span") {
    if (!labelsWritten)
      head.labels = 2;
    else if (head.labels != 2)
      file.error(loc(hl, "labels"))
          << "task = \"span\" predicts a start and an end logit per token: 'head.labels' "
             "must be 2 (or left out), got "
          << head.labels;
    if (head.dropout)
      file.error(loc(hl, "dropout")) << "key 'head.dropout' has no effect for task = \"span\" "
                                        "(BertForQuestionAnswering has no head dropout)";
    for (auto [key, path] : {std::pair<StringRef, StringRef>{"train", data.train},
                             {"eval", data.eval}})
      if (!path.empty() && extensionOf(path) != ".json")
        file.error(loc(data.locations, key))
            << "task = \"span\" reads SQuAD JSON (a .json file), but 'data." << key
            << "' is '" << llvm::sys::path::filename(path) << "'";
  }
  if (head.task == "token-classification") {
    if (head.labels < 2 && head.labels > 0)
      file.error(loc(hl, "labels")) << "task = \"token-classification\" needs 'head.labels' "
                                       ">= 2 (the tag classes), got "
                                    << head.labels;
    for (auto [key, path] : {std::pair<StringRef, StringRef>{"train", data.train},
                             {"eval", data.eval}})
      if (!path.empty() && extensionOf(path) != ".jsonl")
        file.error(loc(data.locations, key))
            << "task = \"token-classification\" reads JSONL rows of words and tags (a .jsonl "
               "file), but 'data."
            << key << "' is '" << llvm::sys::path::filename(path) << "'";
    if (!data.locations.keys.count("text"))
      data.text = "tokens";
    if (!data.locations.keys.count("label"))
      data.label = "ner_tags";
  }
}

void JobReader::checkRanges() {
  const ModelSpec &model = spec.model;
  const KeyLocations &ml = model.locations;
  requireChoice(ml, "model.family", model.family, {"bert"});
  requirePositive(ml, "model.hidden", model.hidden);
  requirePositive(ml, "model.layers", model.layers);
  requirePositive(ml, "model.heads", model.heads);
  requirePositive(ml, "model.intermediate", model.intermediate);
  requirePositive(ml, "model.vocab", model.vocab);
  requirePositive(ml, "model.max_position", model.maxPosition);
  requirePositive(ml, "model.type_vocab", model.typeVocab);
  if (model.hidden > 0 && model.heads > 0 && model.hidden % model.heads != 0)
    file.error(loc(ml, "heads")) << "key 'model.hidden' (" << model.hidden
                                 << ") must be divisible by 'model.heads' (" << model.heads << ")";
  requireRange(ml, "model.dropout", model.dropout, 0, 1, false);
  // `dropout` alone sets both rates: one bad value is one error.
  bool attentionFromDropout =
      model.attentionDropout == model.dropout && loc(ml, "attention_dropout") == loc(ml, "dropout");
  if (!attentionFromDropout)
    requireRange(ml, "model.attention_dropout", model.attentionDropout, 0, 1, false);
  if (model.layerNormEps <= 0)
    file.error(loc(ml, "layer_norm_eps")) << "key 'model.layer_norm_eps' must be positive";
  if (model.initializerRange <= 0)
    file.error(loc(ml, "initializer_range")) << "key 'model.initializer_range' must be positive";

  const HeadSpec &head = spec.head;
  const KeyLocations &hl = head.locations;
  requireChoice(hl, "head.task", head.task, kTasks);
  requirePositive(hl, "head.labels", head.labels);
  checkTaskHead();
  if (head.task == "custom" && head.layers.empty())
    file.error(loc(hl, "task")) << "a custom head needs its ops: add [[head.layers]] tables";
  if (head.task != "custom" && !head.layers.empty())
    file.error(loc(hl, "layers")) << "key 'head.layers' is for task = \"custom\" only";
  for (const HeadLayer &layer : head.layers) {
    const KeyLocations &ll = layer.locations;
    if (layer.op.empty())
      file.error(loc(ll, "op")) << "a [[head.layers]] table needs 'op' ("
                                << joinAlternatives(kHeadLayerOps) << ")";
    else
      requireChoice(ll, "head.layers.op", layer.op, kHeadLayerOps);
    if (layer.op == "linear")
      requirePositive(ll, "head.layers.out", layer.out);
    if (layer.op == "select_token" && (layer.index < 0 || layer.index >= spec.train.seqLen))
      file.error(loc(ll, "index")) << "key 'head.layers.index' (" << layer.index
                                   << ") must be a token position below seq_len ("
                                   << spec.train.seqLen << ")";
    if (layer.op == "dropout")
      requireRange(ll, "head.layers.rate", layer.rate, 0, 1, false);
  }
  if (head.dropout)
    requireRange(hl, "head.dropout", *head.dropout, 0, 1, false);

  const TrainSpec &train = spec.train;
  const KeyLocations &tl = train.locations;
  requirePositive(tl, "train.batch", train.batch);
  requirePositive(tl, "train.seq_len", train.seqLen);
  if (train.seqLen > model.maxPosition && model.maxPosition > 0)
    file.error(loc(tl, "seq_len"))
        << "key 'train.seq_len' (" << train.seqLen << ") must not exceed 'model.max_position' ("
        << model.maxPosition << ")";
  if (train.steps == 0)
    requirePositive(tl, "train.epochs", train.epochs);
  else
    requirePositive(tl, "train.steps", train.steps);
  if (train.lr <= 0)
    file.error(loc(tl, "lr")) << "key 'train.lr' must be positive, got " << formatNumber(train.lr);
  if (train.weightDecay < 0)
    file.error(loc(tl, "weight_decay")) << "key 'train.weight_decay' must not be negative";
  requireRange(tl, "train.adam_betas", train.beta1, 0, 1, false);
  requireRange(tl, "train.adam_betas", train.beta2, 0, 1, false);
  if (train.adamEps <= 0)
    file.error(loc(tl, "adam_eps")) << "key 'train.adam_eps' must be positive";
  requireChoice(tl, "train.schedule", train.schedule, kSchedules);
  requireRange(tl, "train.warmup", train.warmup, 0, 1, true);
  requireChoice(tl, "train.precision", train.precision, kPrecisions);
  if (train.seed < 0)
    file.error(loc(tl, "seed")) << "key 'train.seed' must not be negative";
  // Span and token-classification models have no pooler (HF add_pooling_layer=False).
  bool hasPooler = spec.head.task == "classification";
  bool headFrozen = spec.head.task == "custom"
                        ? spec.isFrozen("head")
                        : (!hasPooler || spec.isFrozen("pooler")) && spec.isFrozen("classifier");
  bool everythingFrozen =
      spec.isFrozen("embeddings") && spec.isFrozen("encoder.layer.0") && headFrozen;
  for (int64_t layer = 1; everythingFrozen && layer < model.layers; ++layer)
    everythingFrozen = spec.isFrozen("encoder.layer." + std::to_string(layer));
  if (everythingFrozen)
    file.error(loc(tl, "freeze")) << "every parameter group is frozen: nothing to train";
}

} // namespace

mlir::FailureOr<JobSpec> bertc::parseJobFile(StringRef path, mlir::MLIRContext &ctx) {
  TomlFile file(path, ctx);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    file.error(mlir::UnknownLoc::get(&ctx))
        << "cannot read '" << path << "': " << buffer.getError().message();
    return mlir::failure();
  }
  StringRef text = (*buffer)->getBuffer();
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
  reader.checkRanges();
  if (file.hasErrors())
    return mlir::failure();
  return spec;
}
