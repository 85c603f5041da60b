//===- CustomHeadChecks.cpp - the rules of a custom head's ops ------------===//
//
// Part of step 4 of reading a job file (JobChecks.cpp): each [[head.layers]] op with the
// keys it reads, parameters named once, and the head's dataflow: each name read is an
// earlier op's output or one of the model's (the encoder's, the embeddings', a layer's), and
// every output but the last is read by a later op.
// The shapes are checked as the head is built (CustomHeadBuilder.cpp).
//
//===----------------------------------------------------------------------===//

#include "JobReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

namespace bertc::job {

namespace {
/// Whether `op` reads the outputs `inputs` names (two or more) rather than one.
bool joinsInputs(StringRef op) { return op == "add" || op == "concat"; }

/// Whether `name` is letters, digits and '_', and not empty.
bool isPlainName(StringRef name) {
  return !name.empty() && llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// Whether a later op reads the output of layers[i]: the next by default, or any by its name.
bool isReadLater(const std::vector<HeadLayer> &layers, size_t i) {
  const HeadLayer &next = layers[i + 1];
  if (next.malformed || (!next.locations.keys.count("input") && !joinsInputs(next.op)))
    return true;
  const std::string &name = layers[i].as;
  return !name.empty() &&
         std::any_of(layers.begin() + i + 1, layers.end(), [&](const HeadLayer &later) {
           return later.malformed || later.input == name || llvm::is_contained(later.inputs, name);
         });
}

/// `name` as a message shows it, escapes for what is not printable.
std::string shown(StringRef name) {
  std::string text;
  llvm::raw_string_ostream escaped(text);
  llvm::printEscapedString(name, escaped);
  return text;
}
} // namespace

/// A custom head's linear or layernorm layer names its parameters head.<name>.weight and
/// .bias, which checkpoints and the generated trainer spell out: letters, digits and '_',
/// one per layer.
void JobReader::requireParamName(const KeyLocations &locations, const std::string &name,
                                 std::set<std::string> &taken) {
  if (!isPlainName(name)) {
    file.error(loc(locations, "name"))
        << "key 'head.layers.name' must be letters, digits and '_' (it names the parameters "
           "head.<name>.weight and .bias), got '"
        << shown(name) << "'";
  } else if (!taken.insert(name).second) {
    file.error(loc(locations, "name"))
        << "two layers with parameters are named '" << name << "', so their parameters head."
        << name << ".weight and .bias would be one: give each its own 'name'";
  }
}

void JobReader::checkCustomHead() {
  const HeadSpec &head = spec.head;
  const KeyLocations &hl = head.locations;
  if (head.task == "custom" && head.layers.empty())
    file.error(loc(hl, "task")) << "a custom head needs its ops: add [[head.layers]] tables";
  if (head.task != "custom" && !head.layers.empty())
    file.error(loc(hl, "layers")) << "key 'head.layers' is for task = \"custom\" only";
  if (int64_t(head.layers.size()) > limits::kHeadLayers)
    file.error(loc(hl, "layers")) << "a custom head may have at most " << limits::kHeadLayers
                                  << " [[head.layers]] tables (bertc's limit), got "
                                  << head.layers.size();
  std::set<std::string> paramNames;
  llvm::StringSet<> named;
  for (size_t i = 0; i < head.layers.size(); ++i) {
    const HeadLayer &layer = head.layers[i];
    const KeyLocations &ll = layer.locations;
    if (layer.malformed) { // its value's type error is its one error; it still gives its name
      if (isPlainName(layer.as))
        named.insert(layer.as);
      continue;
    }
    if (layer.op.empty())
      file.error(loc(ll, "op")) << "a [[head.layers]] table needs 'op' ("
                                << joinAlternatives(kHeadLayerOps) << ")";
    else
      requireChoice(ll, "head.layers.op", layer.op, kHeadLayerOps);
    if (layer.op == "linear") {
      requireCount(ll, "head.layers.out", layer.out, limits::kLabels);
    }
    if (layer.op == "linear" || layer.op == "layernorm")
      requireParamName(ll, layer.name, paramNames);
    if (layer.op == "select_token" && (layer.index < 0 || layer.index >= spec.train.seqLen))
      file.error(loc(ll, "index"))
          << "key 'head.layers.index' (" << layer.index
          << ") must be a token position below seq_len (" << spec.train.seqLen << ")";
    if (layer.op == "dropout")
      requireRange(ll, "head.layers.rate", layer.rate, 0, 1, false);
    if (layer.op == "slice") {
      if (!ll.keys.count("end"))
        file.error(loc(ll, "op")) << "op 'slice' needs 'end' (and 'start', by default 0): it "
                                     "keeps features [start, end) of its input's last dimension";
      else if (layer.start < 0 || layer.end <= layer.start)
        file.error(loc(ll, ll.keys.count("start") ? "start" : "end"))
            << "op 'slice' keeps features [start, end): 'start' (" << layer.start
            << ") must be at least 0 and below 'end' (" << layer.end << ")";
    }
    // A key only another op reads is a mistake (a layernorm's `out`, a relu's `rate`).
    for (auto [key, owner] : {std::pair<StringRef, StringRef>{"out", "linear"},
                              {"index", "select_token"},
                              {"rate", "dropout"},
                              {"start", "slice"},
                              {"end", "slice"}})
      if (ll.keys.count(key) && !layer.op.empty() && layer.op != owner)
        file.error(loc(ll, key)) << "key 'head.layers." << key << "' has no effect on op '"
                                 << layer.op << "': only " << owner << " reads it";
    checkHeadLayerInputs(layer, named);
    // An output nothing reads would be computed for nothing, its parameters never trained.
    if (i + 1 < head.layers.size() && !isReadLater(head.layers, i)) {
      mlir::InFlightDiagnostic diag = file.error(loc(ll, "op"));
      diag << "nothing reads the output of this op '" << layer.op
           << "': the next op reads its 'input" << (joinsInputs(head.layers[i + 1].op) ? "s" : "")
           << "'; ";
      if (layer.as.empty())
        diag << "name this output with 'as' and read it there, or remove the op";
      else
        diag << "read '" << layer.as << "' there, or remove the op";
    }
  }
}

void JobReader::checkHeadLayerInputs(const HeadLayer &layer, llvm::StringSet<> &named) {
  const KeyLocations &ll = layer.locations;
  // "encoder", "embeddings", "encoder.layer.N" (N < layers, written as a number is).
  auto isModelState = [&](StringRef name) {
    unsigned layer;
    if (name.consume_front(kEncoderLayerOutput))
      return !name.getAsInteger(10, layer) && std::to_string(layer) == name &&
             int64_t(layer) < spec.model.layers;
    return name == kEncoderOutput || name == kEmbeddingsOutput;
  };
  auto requireEarlier = [&](StringRef key, StringRef name) {
    if (isModelState(name) || named.contains(name))
      return;
    mlir::InFlightDiagnostic diag = file.error(loc(ll, key));
    diag << "key 'head.layers." << key << "' names '" << shown(name)
         << "', which no earlier [[head.layers]] op gives with 'as'";
    std::vector<StringRef> candidates = {kEncoderOutput, kEmbeddingsOutput};
    for (const auto &entry : named)
      candidates.push_back(entry.getKey());
    if (StringRef suggestion = closestMatch(name, candidates); !suggestion.empty())
      diag << "; did you mean '" << suggestion << "'?";
    else
      diag << " (nor is it one of the model's: \"" << kEncoderOutput << "\", \""
           << kEmbeddingsOutput << "\", or \"" << kEncoderLayerOutput << "N\" for N below "
           << spec.model.layers << ")";
  };
  bool joins = joinsInputs(layer.op);
  if (joins && !ll.keys.count("inputs"))
    file.error(loc(ll, "op")) << "op '" << layer.op << "' needs 'inputs': the names of two or "
                              << "more outputs, given by earlier ops' 'as' (or \"" << kEncoderOutput
                              << "\")";
  else if (joins && layer.inputs.size() < 2)
    file.error(loc(ll, "inputs")) << "op '" << layer.op << "' needs two or more 'inputs', got "
                                  << layer.inputs.size();
  else if (joins && int64_t(layer.inputs.size()) > limits::kHeadInputs)
    file.error(loc(ll, "inputs")) << "op '" << layer.op << "' may read at most "
                                  << limits::kHeadInputs << " 'inputs' (bertc's limit), got "
                                  << layer.inputs.size();
  if (!joins && ll.keys.count("inputs") && !layer.op.empty())
    file.error(loc(ll, "inputs")) << "key 'head.layers.inputs' has no effect on op '" << layer.op
                                  << "': only add and concat read it ('input' names the one "
                                     "input of other ops)";
  if (joins && ll.keys.count("input"))
    file.error(loc(ll, "input")) << "op '" << layer.op
                                 << "' reads the outputs 'inputs' names, not 'input'";
  if (ll.keys.count("input"))
    requireEarlier("input", layer.input);
  for (const std::string &name : layer.inputs)
    requireEarlier("inputs", name);
  if (!ll.keys.count("as"))
    return;
  if (!isPlainName(layer.as) || isModelState(layer.as))
    file.error(loc(ll, "as")) << "key 'head.layers.as' must be letters, digits and '_', and not "
                              << "the name of one of the model's outputs (\"" << kEncoderOutput
                              << "\", \"" << kEmbeddingsOutput << "\"), got '" << shown(layer.as)
                              << "'";
  else if (!named.insert(layer.as).second)
    file.error(loc(ll, "as")) << "two [[head.layers]] ops give their output the name '" << layer.as
                              << "': give each its own 'as'";
}

} // namespace bertc::job
