//===- JobReader.h - reading and checking a job's tables --------*- C++ -*-===//
//
// The frontend's private reader of a job file: TomlFrontend.cpp reads the tables,
// JobChecks.cpp checks ranges and the rules that span tables.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "TomlTable.h"

#include "llvm/ADT/StringSet.h"

#include "bertc/frontend/JobSpec.h"
#include "llvm/ADT/StringRef.h"

#include <set>
#include <string>

namespace bertc::job {

using llvm::StringRef;

inline constexpr StringRef kTables[] = {"model", "head", "train", "data", "lora"};
inline constexpr StringRef kModelKeys[] = {"family",
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
                                           "initializer_range",
                                           "kv_heads",
                                           "head_dim",
                                           "rope_theta",
                                           "tie_embeddings"};
inline constexpr StringRef kHeadKeys[] = {"task", "labels", "label_names", "dropout", "layers"};
inline constexpr StringRef kHeadLayerKeys[] = {"op", "name",  "out",    "index", "rate",
                                               "as", "input", "inputs", "start", "end"};
inline constexpr StringRef kHeadLayerOps[] = {
    "flatten", "select_token", "mean",    "max", "linear", "gelu",  "gelu_tanh",
    "tanh",    "relu",         "dropout", "add", "concat", "slice", "layernorm"};
inline constexpr StringRef kTrainKeys[] = {"batch",    "seq_len",      "epochs",        "steps",
                                           "lr",       "weight_decay", "adam_betas",    "adam_eps",
                                           "schedule", "warmup",       "max_grad_norm", "precision",
                                           "freeze",   "seed",         "shuffle"};
inline constexpr StringRef kDataKeys[] = {"train",
                                          "eval",
                                          "text",
                                          "text_pair",
                                          "label",
                                          "group_by_length",
                                          "packing",
                                          "chat_template",
                                          "do_lower_case",
                                          "strip_accents",
                                          "tokenize_chinese_chars",
                                          "doc_stride",
                                          "max_query_length",
                                          "max_answer_length",
                                          "n_best"};
inline constexpr StringRef kLoraKeys[] = {"from",    "r",          "alpha", "dropout",
                                          "targets", "use_rslora", "base",  "double_quant"};
/// The [data] keys of the SQuAD recipe, for task = "span" only.
inline constexpr StringRef kSpanDataKeys[] = {"doc_stride", "max_query_length", "max_answer_length",
                                              "n_best"};

inline constexpr StringRef kTasks[] = {"classification", "span", "token-classification", "custom",
                                       "causal_lm"};
inline constexpr StringRef kSchedules[] = {"linear", "constant"};
/// [data] chat_template: "auto" (the default: the tokenizer's files decide) or a template.
inline constexpr StringRef kChatTemplates[] = {
    "auto",
#define BERTC_CHAT_TEMPLATE(enumerator, name) name,
#include "bertc/abi/chat_templates.def"
#undef BERTC_CHAT_TEMPLATE
};
inline constexpr StringRef kPrecisions[] = {"auto", "fp32", "bf16", "fp16"};
inline constexpr StringRef kFreezeGroups[] = {
    "embeddings", "encoder", "encoder.layer.N", "encoder.layer.A-B", "pooler",
    "classifier", "head",    "lm_head"};

/// The largest value of each size and count (docs/dsl.md, "Limits"). With them every tensor of
/// a plan stays below 2^48 bytes and the whole plan below 2^62, so the planner's int64 byte
/// arithmetic cannot overflow, and a compile stays within minutes.
namespace limits {
inline constexpr int64_t kHidden = 32768;
inline constexpr int64_t kLayers = 256;
inline constexpr int64_t kHeads = 256;
inline constexpr int64_t kIntermediate = 131072;
inline constexpr int64_t kVocab = 1048576;
inline constexpr int64_t kMaxPosition = 131072; ///< seq_len too, which must not exceed it
inline constexpr int64_t kTypeVocab = 1024;
inline constexpr int64_t kLabels = 65536;  ///< head.labels and a custom linear's out
inline constexpr int64_t kHeadLayers = 64; ///< [[head.layers]] tables
inline constexpr int64_t kHeadInputs = 64; ///< the outputs an add or concat reads
inline constexpr int64_t kBatch = 4096;
inline constexpr int64_t kEpochs = 100000;
inline constexpr int64_t kSteps = 1000000000;
inline constexpr int64_t kNBest = 1000;     ///< [data] n_best
inline constexpr int64_t kLoraRank = 65536; ///< [lora] r
/// The least seq_len of a span head, the trainer's (runtime/data/task_data.cpp): a SQuAD
/// window holds [CLS], the question, two [SEP] and context.
inline constexpr int64_t kMinSquadSeqLen = 8;
} // namespace limits

/// `path` made absolute, a relative one taken from `baseDir`, without `.` and `..`.
std::string resolvePath(StringRef path, StringRef baseDir);

/// Reads the tables of one job file into a JobSpec, reporting through `file`.
class JobReader {
public:
  JobReader(TomlFile &file, StringRef baseDir, JobSpec &spec)
      : file(file), baseDir(baseDir), spec(spec) {}

  void readModel(const toml::table *table);
  void readHead(const toml::table *table);
  void readTrain(const toml::table *table);
  void readData(const toml::table *table);
  /// [lora], after [model] (a family's default targets) and [head].
  void readLora(const toml::table *table);
  void checkRanges();

private:
  void checkTaskHead();
  /// The rules of a decoder family's model and of task = "causal_lm".
  void checkDecoder();
  /// The grouped heads, rotary settings and sliding window of Llama, Mistral and Qwen2.
  void checkRotaryDecoder();
  void checkCustomHead();
  /// The names a custom head's op reads (each an earlier op's, in `named`) and the one it
  /// gives its output, added to `named`.
  void checkHeadLayerInputs(const HeadLayer &layer, llvm::StringSet<> &named);
  void checkSquadData();
  void checkLora();
  /// [lora] from: the PEFT adapter folder's adapter_config.json.
  void readPeftAdapter();
  void readFreezeGroup(TableReader &reader, const toml::node &entry);
  mlir::Location loc(const KeyLocations &locations, StringRef key) {
    return locations.of(key, file.context());
  }
  void requireCount(const KeyLocations &locations, StringRef name, int64_t value, int64_t maximum);
  /// Reports `value` outside [low, high] (or [low, high)), as written or as the float the
  /// trainer holds it in, and a value in range that requireFloat refuses.
  void requireRange(const KeyLocations &locations, StringRef name, double value, double low,
                    double high, bool highIncluded);
  /// Reports a value the trainer's float cannot hold as written: beyond float's largest, or
  /// nonzero below its smallest normal (0 or a subnormal as a float: an adam_eps of 1e-320
  /// would divide by 0). `zeroAllowed` says whether the message offers 0.
  void requireFloat(const KeyLocations &locations, StringRef name, double value, bool zeroAllowed);
  void requireChoice(const KeyLocations &locations, StringRef name, StringRef value,
                     llvm::ArrayRef<StringRef> choices);
  void requireParamName(const KeyLocations &locations, const std::string &name,
                        std::set<std::string> &taken);

  TomlFile &file;
  StringRef baseDir;
  JobSpec &spec;
};

} // namespace bertc::job
