//===- JobSpec.h - a fine-tuning job, as read from its TOML file -*- C++ -*-===//
//
// Plain structs for the four tables of the DSL ([model], [head], [train], [data]), with
// BERT-base / Hugging Face Trainer defaults, and where each setting was written so that
// later stages can point their diagnostics at the TOML line that decided it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bertc {

/// Where the settings of one TOML table were written.
struct KeyLocations {
  /// The TOML file at line 1, column 1: blamed for settings nobody wrote.
  mlir::FileLineColLoc file;
  /// The table's header (`[model]`); null when the file has no such table.
  mlir::FileLineColLoc table;
  /// Each key read, by name. [model] keys taken from config.json map to the `from` key.
  llvm::StringMap<mlir::FileLineColLoc> keys;
  /// The keys taken from config.json (and not written in the TOML file): the JSON field
  /// each came from, for messages about their values.
  llvm::StringMap<std::string> configFields;

  /// The most precise location known for `key`: the key, else the table, else the file,
  /// else an unknown location (for specs built by hand).
  mlir::Location of(llvm::StringRef key, mlir::MLIRContext &ctx) const {
    if (auto found = keys.find(key); found != keys.end())
      return found->second;
    if (table)
      return table;
    if (file)
      return file;
    return mlir::UnknownLoc::get(&ctx);
  }
};

/// rope_scaling: how rotary frequencies are stretched for contexts beyond pretraining
/// (transformers' ROPE_INIT_FUNCTIONS of the same names).
struct RopeScaling {
  std::string type = "default"; ///< default | linear | llama3
  double factor = 1.0;
  double lowFreqFactor = 1.0;                ///< llama3
  double highFreqFactor = 4.0;               ///< llama3
  int64_t originalMaxPositionEmbeddings = 0; ///< llama3
};

/// [model]: the encoder's dimensions and regularization (HF BertConfig names in comments).
struct ModelSpec {
  std::string family = "bert";
  /// Absolute path of the Hugging Face folder named by `from`; empty without one.
  std::string from;
  /// Absolute path of `from`/model.safetensors when it exists, else of its
  /// model.safetensors.index.json (a sharded checkpoint), else of its pytorch_model.bin:
  /// the default initial weights.
  std::string initCheckpoint;
  /// Absolute path of `from`/vocab.txt (BERT) or `from`/tokenizer.json (the decoders) when it
  /// exists: the tokenizer of text data.
  std::string vocabFile;
  int64_t hidden = 768;           // hidden_size
  int64_t layers = 12;            // num_hidden_layers
  int64_t heads = 12;             // num_attention_heads
  int64_t intermediate = 3072;    // intermediate_size
  int64_t vocab = 30522;          // vocab_size
  int64_t maxPosition = 512;      // max_position_embeddings
  int64_t typeVocab = 2;          // type_vocab_size
  double dropout = 0.1;           // hidden_dropout_prob
  double attentionDropout = 0.1;  // attention_probs_dropout_prob
  double layerNormEps = 1e-12;    // layer_norm_eps
  double initializerRange = 0.02; // initializer_range
  /// The input id batches are padded with (pad_token_id: [PAD] in BERT's vocabularies),
  /// whose embedding row gets no gradient when `padRowFixed`.
  int64_t padTokenId = 0;
  /// Whether the word embeddings keep the pad id's row fixed (nn.Embedding's padding_idx):
  /// a decoder without a pad_token_id pads with id 0 but trains its row.
  bool padRowFixed = true;

  /// The decoder families' settings (Hugging Face LlamaConfig / Qwen2Config names).
  int64_t kvHeads = 0;        // num_key_value_heads; 0: heads
  int64_t headDim = 0;        // head_dim; 0: hidden / heads
  double ropeTheta = 10000.0; // rope_theta
  RopeScaling ropeScaling;    // rope_scaling
  bool tieEmbeddings = false; // tie_word_embeddings: the LM head reads the word embeddings
  bool qkvBias = false;       // q, k, v projections with a bias (Qwen2; Llama's attention_bias)
  bool outputBias = false;    // the attention's output projection with one (attention_bias)
  bool mlpBias = false;       // gate, up and down projections with one (mlp_bias)
  /// GPT-2's embd_pdrop, the embeddings' dropout, where config.json gives it; unset: `dropout`
  /// (which a [model] dropout key sets for both).
  std::optional<double> embeddingDropout;
  /// The MLP's activation as config.json names it (GPT-2's activation_function: "gelu_new"
  /// or "gelu"); empty: the family's own.
  std::string activation;
  /// GPT-2's n_inner null: the MLP is 4 x hidden wide, of the hidden the job ends with (a
  /// [model] hidden key's, where one overrides n_embd).
  bool intermediateFromHidden = false;
  /// config.json's model_type when the family reads several ("mistral" is saved as read).
  std::string modelType;
  /// sliding_window when the model has an active one (Mistral's): seq_len must not exceed
  /// it, since bertc's attention sees every earlier token; 0: none.
  int64_t slidingWindow = 0;
  /// A bitsandbytes 4-bit folder's (config.json quantization_config: load_in_4bit, NF4): its
  /// layers' linear weights are stored quantized, which only a LoRA job with [lora] base =
  /// "nf4" trains on; `prequantizedDoubleQuant` is its bnb_4bit_use_double_quant.
  bool prequantizedNf4 = false;
  bool prequantizedDoubleQuant = false;
  /// bos_token_id and eos_token_id (one id, or several for eos), written back as read.
  std::optional<int64_t> bosTokenId;
  std::vector<int64_t> eosTokenIds;
  KeyLocations locations;

  /// The key/value heads (grouped-query attention shares each among heads / kvHeads).
  int64_t keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
  /// The width of one attention head.
  int64_t attentionHeadDim() const {
    return headDim > 0 ? headDim : heads > 0 ? hidden / heads : 0;
  }
};

/// The names by which a custom head's ops read the model's [batch, seq, hidden] states: the
/// encoder's output, the embeddings' output, and layer N's output ("encoder.layer.N").
inline constexpr char kEncoderOutput[] = "encoder";
inline constexpr char kEmbeddingsOutput[] = "embeddings";
inline constexpr char kEncoderLayerOutput[] = "encoder.layer.";
/// The most features a custom head's op may give: the widest flatten ([batch, seq, hidden] at
/// the largest seq_len and hidden, 8192 x 32768). Widths stay far from overflowing; a tensor
/// past 2^48 bytes at the plan's bounds is the planner's error.
inline constexpr int64_t kMaxHeadFeatures = int64_t(1) << 28;

/// One `[[head.layers]]` entry of a custom head: an op applied to the previous output (the
/// first to the encoder's [batch, seq, hidden] output), or to the outputs it names.
struct HeadLayer {
  /// flatten | select_token | mean | max | linear | gelu | gelu_tanh | tanh | relu | dropout |
  /// add | concat | slice | layernorm (gelu_tanh: GELU's tanh approximation)
  std::string op;
  /// linear, layernorm: the parameters are head.<name>.weight and head.<name>.bias.
  std::string name;
  int64_t out = 0;   ///< linear: output features
  int64_t index = 0; ///< select_token: which token
  double rate = 0.1; ///< dropout
  /// The name later layers read this one's output by; empty when only the next reads it.
  std::string as;
  /// A one-input op's input, by name ("encoder" or an earlier `as`); empty: the previous
  /// layer's output.
  std::string input;
  std::vector<std::string> inputs; ///< add, concat: two or more names
  int64_t start = 0, end = 0;      ///< slice: features [start, end) of the last dimension
  /// Some key's value had the wrong type (reported where it is read): the layer's other
  /// rules are not checked, and it counts as reading whatever a name could give it.
  bool malformed = false;
  KeyLocations locations;
};

/// [head]: the task-specific layer on top of the encoder.
struct HeadSpec {
  std::string task = "classification";
  int64_t labels = 2;
  /// task = "custom": the head's ops, in order; the last must give [batch, labels]
  /// logits, which a softmax cross-entropy turns into the loss.
  std::vector<HeadLayer> layers;
  /// Dropout before the classifier (HF `classifier_dropout`); unset means model.dropout.
  std::optional<double> dropout;
  /// The class names by id: `label_names`, else a `from` folder's config.json id2label;
  /// empty without.
  std::vector<std::string> labelNames;
  KeyLocations locations;
};

/// [train]: the optimization (HF Trainer / torch.optim.AdamW names and defaults).
struct TrainSpec {
  /// Examples per optimizer step (the effective batch).
  int64_t batch = 8;
  /// Longest sequence, in tokens.
  int64_t seqLen = 128;
  int64_t epochs = 3;
  /// Optimizer steps to run; 0 means "run `epochs` epochs".
  int64_t steps = 0;
  double lr = 5e-5;
  double weightDecay = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double adamEps = 1e-8;
  /// `linear` (decay to 0 after warmup) or `constant` (no warmup, as HF's).
  std::string schedule = "linear";
  /// Fraction of the steps spent warming the learning rate up from 0.
  double warmup = 0.0;
  /// Before each update, scale the gradients so their global L2 norm is at most this
  /// (torch.nn.utils.clip_grad_norm_, the Hugging Face Trainer's max_grad_norm); 0: never.
  double maxGradNorm = 0.0;
  /// `auto`, `fp32`, `bf16` or `fp16`.
  std::string precision = "auto";
  /// Parameter groups without gradients or optimizer state: `embeddings`, `encoder`,
  /// `encoder.layer.N`, `pooler`, `classifier`.
  std::vector<std::string> freeze;
  int64_t seed = 42;
  bool shuffle = true;
  KeyLocations locations;
};

/// [data]: where the examples are and which fields hold text and label.
struct DataSpec {
  /// Absolute paths (resolved against the TOML file's folder); empty when not given.
  std::string train;
  std::string eval;
  std::string text = "text";
  /// The second text of a sentence pair (GLUE's "sentence2"); empty for single texts.
  std::string textPair;
  std::string label = "label";
  /// Batch rows of similar length together (shuffled buckets) so fewer pads are computed.
  bool groupByLength = false;
  /// task = "causal_lm": rows packed into seq_len rows, each row's tokens attending only to
  /// its own (fewer pads computed).
  bool packing = false;
  /// task = "causal_lm": the chat template of `messages` rows, a name of chat_templates.def;
  /// "" ("auto" in the job) leaves it to the tokenizer's files when the trainer runs.
  std::string chatTemplate;
  /// The tokenizer's settings (BertTokenizerFast's and tokenizer_config.json's keys
  /// do_lower_case, strip_accents, tokenize_chinese_chars). One not given is left to the
  /// tokenizer_config.json beside the vocabulary when the trainer runs, then to a default.
  std::optional<bool> doLowerCase;
  std::optional<bool> stripAccents;
  std::optional<bool> tokenizeChineseChars;
  /// SQuAD (task = "span"), as run_qa.py's flags of the same names and defaults: context
  /// tokens consecutive windows share, question tokens kept (0: all), tokens of an answer
  /// at most, ranked answers per question in nbest_predictions.json.
  int64_t docStride = 128;
  int64_t maxQueryLength = 0;
  int64_t maxAnswerLength = 30;
  int64_t nBest = 20;
  KeyLocations locations;
};

/// [lora] targets = "all-linear": every linear layer but the LM head and the task head's.
inline constexpr char kAllLinear[] = "all-linear";
/// [lora] base = "auto": the fit driver chooses how the frozen base is stored.
inline constexpr char kAutoBase[] = "auto";

/// [lora]: LoRA adapters on the frozen model's linear layers (PEFT's LoraConfig: the names
/// in comments, its defaults).
struct LoraSpec {
  /// A [lora] table was written: the model's own parameters are frozen but for the task
  /// head's (PEFT's modules_to_save), and each targeted layer gets an adapter.
  bool enabled = false;
  int64_t rank = 8;     // r
  double alpha = 8.0;   // lora_alpha
  double dropout = 0.0; // lora_dropout
  /// The modules that get an adapter, by the last part of their name ("q_proj", "query",
  /// "c_attn"), or {"all-linear"}: every linear layer but the LM head. Empty: the family's
  /// PEFT default (FamilyConfig::loraTargets).
  std::vector<std::string> targets; // target_modules
  bool useRslora = false;           // use_rslora: alpha / sqrt(r) in place of alpha / r
  /// `base`: how the frozen layers' linear weights are stored: "nf4" (QLoRA) or "int8"
  /// (LLM.int8() rows); empty, as the precision stores every parameter; "auto", the fit
  /// driver's choice among those three (baseCandidates), which bertc settles before it
  /// builds the step (a graph built with "auto" unsettled stores the base as empty does).
  std::string base;
  /// `double_quant`: NF4's absmaxes quantized again (bnb_4bit_use_double_quant).
  bool doubleQuant = true;
  /// `from`: a PEFT adapter folder to continue training (absolute); its
  /// adapter_model.safetensors, the adapters' initial values. Empty without.
  std::string from;
  std::string adapterCheckpoint;
  KeyLocations locations;

  /// What the adapter's product is multiplied by (PEFT's `scaling`).
  double scaling() const;
  /// The bases a plan may store: `base`, or for "auto" the precision's, int8 rows and NF4,
  /// the least quantized (the nearest the model's own weights) first, the smallest last.
  std::vector<std::string> baseCandidates() const;
};

/// A whole fine-tuning job.
struct JobSpec {
  /// Absolute path of the TOML file the job was read from.
  std::string path;
  ModelSpec model;
  HeadSpec head;
  TrainSpec train;
  DataSpec data;
  LoraSpec lora;

  /// True when [train] freeze names `group` (e.g. `encoder.layer.3`, or `encoder`).
  bool inFreezeList(llvm::StringRef group) const {
    for (const std::string &frozen : train.freeze)
      if (group == frozen || (frozen == "encoder" && group.starts_with("encoder.layer.")))
        return true;
    return false;
  }
  /// True when the model's parameters of `group` get no gradient: [train] freeze names it,
  /// or LoRA adapters train in the model's place (all but the task head's groups).
  bool isFrozen(llvm::StringRef group) const {
    if (lora.enabled && group != "classifier" && group != "head")
      return true;
    return inFreezeList(group);
  }
};

} // namespace bertc
