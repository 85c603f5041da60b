//===- JobChecks.cpp - ranges and cross-table rules of a job --------------===//
//
// Step 4 of reading a job file (TomlFrontend.cpp): every value in its range, the choices
// among the known ones (with a suggestion for a near miss), and the rules that span
// tables (hidden % heads, seq_len <= max_position, what each task head reads, SQuAD windows
// that fit seq_len).
//
//===----------------------------------------------------------------------===//

#include "FamilyConfig.h"
#include "JobReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace bertc::job {

namespace {
/// " (config.json's 'hidden_size')" for a key whose value came from config.json, else "".
std::string configOrigin(const KeyLocations &locations, StringRef name) {
  auto field = locations.configFields.find(name.rsplit('.').second);
  return field == locations.configFields.end() ? std::string()
                                               : " (config.json's '" + field->second + "')";
}

/// `value` in the fewest digits that read back as it: 1e-320, 0.99999999999 (where
/// formatNumber's six digits give 9.99989e-321 and 1).
std::string shortestNumber(double value) {
  char text[32];
  for (int digits = 1;; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (digits >= 17 || std::strtod(text, nullptr) == value)
      return text;
  }
}
/// The families that have the [model] key `key`, as a message lists them: family "llama",
/// "qwen2" or "gpt2".
std::string familiesWithKey(StringRef key) {
  llvm::SmallVector<std::string> names;
  for (StringRef name : modelFamilyNames())
    if (llvm::is_contained(findFamilyConfig(name)->decoderKeys, key))
      names.push_back("\"" + name.str() + "\"");
  std::string text = "family ";
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

} // namespace

void JobReader::requireCount(const KeyLocations &locations, StringRef name, int64_t value,
                             int64_t maximum) {
  if (value < 1)
    file.error(loc(locations, name.rsplit('.').second))
        << "key '" << name << "'" << configOrigin(locations, name) << " must be positive, got "
        << value;
  else if (value > maximum)
    file.error(loc(locations, name.rsplit('.').second))
        << "key '" << name << "'" << configOrigin(locations, name) << " must be at most " << maximum
        << " (bertc's limit), got " << value;
}

void JobReader::requireRange(const KeyLocations &locations, StringRef name, double value,
                             double low, double high, bool highIncluded) {
  auto inRange = [&](double x) { return x >= low && (highIncluded ? x <= high : x < high); };
  // The trainer holds the value as a float: 0.99999999999 is 1 there. (A value in range
  // converts without overflow.)
  float held = inRange(value) ? float(value) : 0.0f;
  if (inRange(value) && inRange(held)) {
    requireFloat(locations, name, value, /*zeroAllowed=*/low <= 0);
    return;
  }
  mlir::InFlightDiagnostic diag = file.error(loc(locations, name.rsplit('.').second));
  diag << "key '" << name << "'" << configOrigin(locations, name) << " must be in ["
       << formatNumber(low) << ", " << formatNumber(high) << (highIncluded ? "]" : ")") << ", got "
       << shortestNumber(value);
  if (inRange(value))
    diag << ", which is " << formatNumber(held) << " as the float the trainer holds it in";
}

void JobReader::requireFloat(const KeyLocations &locations, StringRef name, double value,
                             bool zeroAllowed) {
  constexpr double kLargest = std::numeric_limits<float>::max();
  constexpr double kSmallestNormal = std::numeric_limits<float>::min();
  double magnitude = std::fabs(value);
  if (magnitude <= kLargest && (magnitude >= kSmallestNormal || value == 0))
    return;
  mlir::InFlightDiagnostic diag = file.error(loc(locations, name.rsplit('.').second));
  diag << "key '" << name << "'" << configOrigin(locations, name);
  if (magnitude > kLargest)
    diag << " must be at most " << formatNumber(kLargest) << ", the largest float";
  else
    diag << " must be " << (zeroAllowed ? "0 or " : "") << "at least "
         << formatNumber(kSmallestNormal) << ", the smallest normal float";
  diag << " (the trainer's type for it), got " << shortestNumber(value);
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
    for (auto [key, path] :
         {std::pair<StringRef, StringRef>{"train", data.train}, {"eval", data.eval}})
      if (!path.empty() && extensionOf(path) != ".json")
        file.error(loc(data.locations, key))
            << "task = \"span\" reads SQuAD JSON (a .json file), but 'data." << key << "' is '"
            << llvm::sys::path::filename(path) << "'";
  }
  if (hl.keys.count("label_names")) {
    llvm::StringSet<> seen;
    if (int64_t(head.labelNames.size()) != head.labels)
      file.error(loc(hl, "label_names"))
          << "key 'head.label_names' names " << head.labelNames.size() << " classes, but there are "
          << head.labels << " ('head.labels')";
    else if (!llvm::all_of(head.labelNames,
                           [&](const std::string &name) { return seen.insert(name).second; }))
      file.error(loc(hl, "label_names")) << "key 'head.label_names' names a class twice";
  }
  if (head.task == "custom" && head.labels == 1)
    file.error(loc(hl, "labels"))
        << "task = \"custom\" ends in a softmax cross-entropy over its logits: 'head.labels' "
           "must be at least 2 (a regression is task = \"classification\" with labels = 1)";
  if (head.task == "custom" && head.dropout)
    file.error(loc(hl, "dropout"))
        << "key 'head.dropout' has no effect for task = \"custom\": put a [[head.layers]] table "
           "with op = \"dropout\" where the head drops";
  if (head.task == "token-classification") {
    if (head.labels < 2 && head.labels > 0)
      file.error(loc(hl, "labels")) << "task = \"token-classification\" needs 'head.labels' "
                                       ">= 2 (the tag classes), got "
                                    << head.labels;
    for (auto [key, path] :
         {std::pair<StringRef, StringRef>{"train", data.train}, {"eval", data.eval}})
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

void JobReader::checkDecoder() {
  const ModelSpec &model = spec.model;
  const KeyLocations &ml = model.locations;
  const FamilyConfig *family = findFamilyConfig(model.family);
  if (!family)
    return; // reported as an unknown family
  const HeadSpec &head = spec.head;
  if (llvm::is_contained(kTasks, head.task) && !llvm::is_contained(family->tasks, head.task))
    file.error(loc(head.locations, "task"))
        << "task = \"" << head.task << "\" is not a head of the '" << model.family
        << "' family, whose tasks are \"" << llvm::join(family->tasks, "\", \"") << "\"";
  if (spec.data.packing && head.task != "causal_lm")
    file.error(loc(spec.data.locations, "packing"))
        << "key 'data.packing' packs a causal LM's rows: task = \"" << head.task
        << "\" reads one example per row";
  if (spec.data.locations.keys.count("chat_template")) {
    if (head.task != "causal_lm")
      file.error(loc(spec.data.locations, "chat_template"))
          << "key 'data.chat_template' renders a causal LM's 'messages' rows: task = \""
          << head.task << "\" reads no conversations";
    else
      requireChoice(spec.data.locations, "data.chat_template", spec.data.chatTemplate,
                    kChatTemplates);
  }
  for (StringRef key : kDecoderModelKeys)
    if (ml.keys.count(key) && !llvm::is_contained(family->decoderKeys, key))
      file.error(loc(ml, key)) << "key 'model." << key << "' is a decoder's ("
                               << familiesWithKey(key) << "), not the '" << model.family
                               << "' family's";
  if (llvm::is_contained(family->decoderKeys, "rope_theta"))
    checkRotaryDecoder();
  if (head.task != "causal_lm")
    return;
  // The special ids config.json names must be rows of the vocabulary.
  auto checkTokenId = [&](int64_t id, StringRef field) {
    if (id < 0 || (model.vocab > 0 && id >= model.vocab))
      file.error(loc(ml, "from")) << "token id " << id << " (config.json's '" << field
                                  << "') is not a row of the " << model.vocab
                                  << "-token vocabulary ('model.vocab')";
  };
  if (model.bosTokenId)
    checkTokenId(*model.bosTokenId, "bos_token_id");
  for (int64_t eos : model.eosTokenIds)
    checkTokenId(eos, "eos_token_id");
  checkTokenId(model.padTokenId, "pad_token_id");
  if (spec.head.locations.keys.count("labels"))
    file.error(loc(head.locations, "labels"))
        << "key 'head.labels' has no meaning for task = \"causal_lm\", whose classes are the "
           "vocabulary";
  if (spec.head.dropout)
    file.error(loc(head.locations, "dropout"))
        << "key 'head.dropout' has no effect for task = \"causal_lm\" (the LM head has no dropout)";
}

/// The grouped heads, rotary settings and window of a rotary decoder (Llama, Mistral, Qwen2).
void JobReader::checkRotaryDecoder() {
  const ModelSpec &model = spec.model;
  const KeyLocations &ml = model.locations;
  requireCount(ml, "model.kv_heads", model.keyValueHeads(), limits::kHeads);
  if (model.heads > 0 && model.keyValueHeads() > 0 && model.heads % model.keyValueHeads() != 0)
    file.error(loc(ml, "kv_heads"))
        << "key 'model.heads' (" << model.heads << ") must be divisible by 'model.kv_heads' ("
        << model.keyValueHeads() << "): each key/value head serves a group of query heads"
        << configOrigin(ml, "model.kv_heads");
  if (ml.keys.count("head_dim") || model.headDim != 0) {
    requireCount(ml, "model.head_dim", model.headDim, limits::kHidden);
    if (model.headDim % 2 != 0)
      file.error(loc(ml, "head_dim")) << "key 'model.head_dim' must be even (rotary embeddings "
                                         "turn pairs of dimensions), got "
                                      << model.headDim << configOrigin(ml, "model.head_dim");
  } else if (model.attentionHeadDim() % 2 != 0) {
    file.error(loc(ml, "heads")) << "the head dimension 'model.hidden' / 'model.heads' ("
                                 << model.attentionHeadDim()
                                 << ") must be even (rotary embeddings turn pairs of dimensions)";
  }
  if (model.ropeTheta <= 0)
    file.error(loc(ml, "rope_theta"))
        << "key 'model.rope_theta' must be positive" << configOrigin(ml, "model.rope_theta");
  else
    requireFloat(ml, "model.rope_theta", model.ropeTheta, /*zeroAllowed=*/false);
  const TrainSpec &train = spec.train;
  if (model.slidingWindow > 0 && train.seqLen > model.slidingWindow)
    file.error(loc(train.locations, "seq_len"))
        << "key 'train.seq_len' (" << train.seqLen << ") exceeds the model's sliding_window ("
        << model.slidingWindow << ", config.json's 'sliding_window'): bertc's attention sees "
        << "every earlier token, so the window must not be active";
}

/// The SQuAD keys of [data]: for a span head only, and windows that fit seq_len. A window
/// holds seq_len - 3 - (question tokens) context tokens, and doc_stride of them must be
/// left for the next window to advance: doc_stride < seq_len - 3 - max_query_length (or
/// seq_len - 3 when questions are not cut; a long question is then refused by the trainer,
/// naming it, as Hugging Face refuses it).
void JobReader::checkSquadData() {
  DataSpec &data = spec.data;
  const KeyLocations &dl = data.locations;
  if (spec.head.task != "span") {
    for (StringRef key : kSpanDataKeys)
      if (dl.keys.count(key))
        file.error(loc(dl, key)) << "key 'data." << key
                                 << "' is for task = \"span\" only (SQuAD windows and answers)";
    return;
  }
  int64_t seqLen = spec.train.seqLen;
  if (seqLen < 1)
    return; // reported with [train] seq_len
  if (seqLen < limits::kMinSquadSeqLen) {
    file.error(loc(spec.train.locations, "seq_len"))
        << "task = \"span\" needs 'train.seq_len' of at least " << limits::kMinSquadSeqLen
        << " (a SQuAD window holds [CLS], the question, two [SEP] and context), got " << seqLen;
    return;
  }
  bool queryCut = dl.keys.count("max_query_length");
  if (queryCut && (data.maxQueryLength < 1 || data.maxQueryLength > seqLen - 4))
    file.error(loc(dl, "max_query_length"))
        << "key 'data.max_query_length' must be in [1, " << seqLen - 4
        << "] so that a window of seq_len " << seqLen
        << " holds [CLS], the question, two [SEP] and context, got " << data.maxQueryLength;
  int64_t windowTokens = seqLen - 3 - (queryCut ? data.maxQueryLength : 0);
  if (data.docStride < 0) {
    file.error(loc(dl, "doc_stride"))
        << "key 'data.doc_stride' must not be negative, got " << data.docStride;
  } else if (windowTokens > 0 && data.docStride >= windowTokens) {
    bool written = dl.keys.count("doc_stride");
    mlir::InFlightDiagnostic diag =
        file.error(written ? loc(dl, "doc_stride") : loc(spec.train.locations, "seq_len"));
    diag << (written ? "key 'data.doc_stride' (" : "the default 'data.doc_stride' (")
         << data.docStride << ", the context tokens consecutive windows share) must be less "
         << "than the " << windowTokens << " context tokens a window holds (seq_len " << seqLen
         << " - 3";
    if (queryCut)
      diag << " - max_query_length " << data.maxQueryLength;
    diag << ")";
    if (!written)
      diag << ": set [data] doc_stride";
  }
  requireCount(dl, "data.max_answer_length", data.maxAnswerLength, limits::kMaxPosition);
  requireCount(dl, "data.n_best", data.nBest, limits::kNBest);
}

void JobReader::checkRanges() {
  const ModelSpec &model = spec.model;
  const KeyLocations &ml = model.locations;
  requireChoice(ml, "model.family", model.family, modelFamilyNames());
  requireCount(ml, "model.hidden", model.hidden, limits::kHidden);
  requireCount(ml, "model.layers", model.layers, limits::kLayers);
  requireCount(ml, "model.heads", model.heads, limits::kHeads);
  requireCount(ml, "model.intermediate", model.intermediate, limits::kIntermediate);
  requireCount(ml, "model.vocab", model.vocab, limits::kVocab);
  requireCount(ml, "model.max_position", model.maxPosition, limits::kMaxPosition);
  requireCount(ml, "model.type_vocab", model.typeVocab, limits::kTypeVocab);
  if (model.hidden > 0 && model.heads > 0 && model.hidden % model.heads != 0 && model.headDim == 0)
    file.error(loc(ml, "heads")) << "key 'model.hidden' (" << model.hidden
                                 << ") must be divisible by 'model.heads' (" << model.heads << ")";
  requireRange(ml, "model.dropout", model.dropout, 0, 1, false);
  if (model.embeddingDropout)
    requireRange(ml, "model.embedding_dropout", *model.embeddingDropout, 0, 1, false);
  // `dropout` alone sets both rates: one bad value is one error.
  bool attentionFromDropout =
      model.attentionDropout == model.dropout && loc(ml, "attention_dropout") == loc(ml, "dropout");
  if (!attentionFromDropout)
    requireRange(ml, "model.attention_dropout", model.attentionDropout, 0, 1, false);
  if (model.layerNormEps <= 0)
    file.error(loc(ml, "layer_norm_eps")) << "key 'model.layer_norm_eps' must be positive";
  else
    requireFloat(ml, "model.layer_norm_eps", model.layerNormEps, /*zeroAllowed=*/false);
  if (model.initializerRange <= 0)
    file.error(loc(ml, "initializer_range")) << "key 'model.initializer_range' must be positive";
  else
    requireFloat(ml, "model.initializer_range", model.initializerRange, /*zeroAllowed=*/false);

  const HeadSpec &head = spec.head;
  const KeyLocations &hl = head.locations;
  requireChoice(hl, "head.task", head.task, kTasks);
  requireCount(hl, "head.labels", head.labels, limits::kLabels);
  checkDecoder();
  checkTaskHead();
  checkCustomHead();
  if (head.dropout)
    requireRange(hl, "head.dropout", *head.dropout, 0, 1, false);

  const TrainSpec &train = spec.train;
  const KeyLocations &tl = train.locations;
  requireCount(tl, "train.batch", train.batch, limits::kBatch);
  requireCount(tl, "train.seq_len", train.seqLen, limits::kMaxPosition);
  if (train.seqLen > model.maxPosition && model.maxPosition > 0)
    file.error(loc(tl, "seq_len"))
        << "key 'train.seq_len' (" << train.seqLen << ") must not exceed 'model.max_position' ("
        << model.maxPosition << ")";
  // Without 'steps' the epochs decide; a 'steps' written must be a count.
  if (!tl.keys.count("steps"))
    requireCount(tl, "train.epochs", train.epochs, limits::kEpochs);
  else
    requireCount(tl, "train.steps", train.steps, limits::kSteps);
  if (train.lr <= 0)
    file.error(loc(tl, "lr")) << "key 'train.lr' must be positive, got " << formatNumber(train.lr);
  else
    requireFloat(tl, "train.lr", train.lr, /*zeroAllowed=*/false);
  if (train.weightDecay < 0)
    file.error(loc(tl, "weight_decay")) << "key 'train.weight_decay' must not be negative";
  else
    requireFloat(tl, "train.weight_decay", train.weightDecay, /*zeroAllowed=*/true);
  requireRange(tl, "train.adam_betas", train.beta1, 0, 1, false);
  requireRange(tl, "train.adam_betas", train.beta2, 0, 1, false);
  if (train.adamEps <= 0)
    file.error(loc(tl, "adam_eps")) << "key 'train.adam_eps' must be positive";
  else
    requireFloat(tl, "train.adam_eps", train.adamEps, /*zeroAllowed=*/false);
  requireChoice(tl, "train.schedule", train.schedule, kSchedules);
  requireRange(tl, "train.warmup", train.warmup, 0, 1, true);
  if (train.schedule == "constant" && train.warmup > 0)
    file.error(loc(tl, "warmup")) << "key 'train.warmup' has no effect with schedule \"constant\", "
                                     "which holds the rate from step 1 as Hugging Face's does: "
                                     "drop it, or use schedule \"linear\"";
  if (train.maxGradNorm < 0)
    file.error(loc(tl, "max_grad_norm"))
        << "key 'train.max_grad_norm' must not be negative (0 turns clipping off), got "
        << formatNumber(train.maxGradNorm);
  else
    requireFloat(tl, "train.max_grad_norm", train.maxGradNorm, /*zeroAllowed=*/true);
  requireChoice(tl, "train.precision", train.precision, kPrecisions);
  if (train.seed < 0)
    file.error(loc(tl, "seed")) << "key 'train.seed' must not be negative";
  // The head's freeze groups: a custom head's own, else the classifier, after the pooler
  // where the model has one (span and token-classification models have none: HF
  // add_pooling_layer=False).
  bool custom = spec.head.task == "custom";
  std::vector<StringRef> headGroups = {"head"};
  if (!custom)
    headGroups = spec.head.task == "classification" ? std::vector<StringRef>{"pooler", "classifier"}
                                                    : std::vector<StringRef>{"classifier"};
  for (StringRef group : {"pooler", "classifier", "head"})
    if (spec.inFreezeList(group) && !llvm::is_contained(headGroups, group))
      file.error(loc(tl, "freeze"))
          << "freeze group '" << group << "' names no parameter of a task = \"" << spec.head.task
          << "\" model, whose head is '" << llvm::join(headGroups, "' and '") << "'";
  // A custom head without a linear or layernorm layer has no parameters to train (or freeze).
  bool headWithoutParameters = custom && llvm::none_of(spec.head.layers, [](const HeadLayer &l) {
                                 return l.op == "linear" || l.op == "layernorm";
                               });
  if (headWithoutParameters && spec.inFreezeList("head"))
    file.error(loc(tl, "freeze")) << "freeze group 'head' names no parameter: this custom head "
                                     "has no linear or layernorm layer";
  bool headFrozen =
      llvm::all_of(headGroups, [&](StringRef group) { return spec.inFreezeList(group); }) ||
      headWithoutParameters;
  bool everythingFrozen =
      spec.inFreezeList("embeddings") && spec.inFreezeList("encoder.layer.0") && headFrozen;
  for (int64_t layer = 1; everythingFrozen && layer < std::min(model.layers, limits::kLayers);
       ++layer)
    everythingFrozen = spec.inFreezeList("encoder.layer." + std::to_string(layer));
  // (A LoRA adapter is frozen with its layer's group, so this holds with adapters too.)
  if (everythingFrozen)
    file.error(loc(tl, "freeze")) << "every parameter group is frozen: nothing to train";
  checkSquadData();
  checkLora();
}

} // namespace bertc::job
