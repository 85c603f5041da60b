//===- LlamaConfig.cpp - Llama's and Qwen2's config.json, read and written -===//
//
// The fields of Hugging Face's LlamaConfig (model_type "llama", and "mistral", whose
// MistralConfig has the same fields) and Qwen2Config that bertc reads from a `from` folder,
// the values it must hold (SiLU, a supported rope_scaling, no active sliding window), and
// the config.json saved with a trained model. Qwen2 differs in its q/k/v biases and its
// sliding-window switch.
//
//===----------------------------------------------------------------------===//

#include "ConfigReader.h"
#include "FamilyConfig.h"

using namespace bertc;

namespace {

/// rope_scaling: null, or {"rope_type" (or the older "type"): "default" | "linear" |
/// "llama3", "factor", ...}; another type is an error naming it.
void readRopeScaling(ConfigReader &reader, ModelSpec &model) {
  const llvm::json::Object *scaling = reader.readObject("rope_scaling");
  if (!scaling)
    return;
  std::optional<StringRef> type = scaling->getString("rope_type");
  if (!type)
    type = scaling->getString("type");
  if (!type || (*type != "default" && *type != "linear" && *type != "llama3")) {
    reader.error() << "'rope_scaling.rope_type' must be \"default\", \"linear\" or \"llama3\" "
                      "(the rotary scalings bertc builds), got "
                   << (type ? "\"" + type->str() + "\"" : std::string("none"));
    return;
  }
  RopeScaling &out = model.ropeScaling;
  out.type = type->str();
  if (out.type == "default")
    return;
  auto number = [&](StringRef field, double &into, bool required) {
    std::optional<double> read = scaling->getNumber(field);
    if (read)
      into = *read;
    else if (required || scaling->get(field))
      reader.error() << "'rope_scaling." << field << "' must be a number";
  };
  number("factor", out.factor, /*required=*/true);
  if (out.factor < 1)
    reader.error() << "'rope_scaling.factor' must be at least 1, got " << out.factor;
  if (out.type != "llama3")
    return;
  number("low_freq_factor", out.lowFreqFactor, true);
  number("high_freq_factor", out.highFreqFactor, true);
  std::optional<int64_t> original = scaling->getInteger("original_max_position_embeddings");
  if (!original || *original < 1)
    reader.error() << "'rope_scaling.original_max_position_embeddings' must be a positive "
                      "integer";
  else
    out.originalMaxPositionEmbeddings = *original;
  if (out.highFreqFactor <= out.lowFreqFactor)
    reader.error() << "'rope_scaling.high_freq_factor' must exceed 'low_freq_factor'";
}

/// The fields Llama, Mistral and Qwen2 share.
void readDecoderConfig(ConfigReader &reader, ModelSpec &model) {
  reader.requireString("hidden_act", "silu");
  for (StringRef moe : {"num_local_experts", "num_experts", "num_experts_per_tok"})
    if (const llvm::json::Value *experts = reader.fields().get(moe))
      if (experts->kind() != llvm::json::Value::Null && experts->getAsInteger() != 0)
        reader.error() << "'" << moe << "': mixture-of-experts models are not supported";
  KeyLocations &locations = model.locations;
  reader.readInteger("hidden_size", model.hidden, "hidden", locations);
  reader.readInteger("num_hidden_layers", model.layers, "layers", locations);
  reader.readInteger("num_attention_heads", model.heads, "heads", locations);
  model.kvHeads = model.heads;
  reader.readInteger("num_key_value_heads", model.kvHeads, "kv_heads", locations);
  if (const llvm::json::Value *headDim = reader.fields().get("head_dim");
      headDim && headDim->kind() != llvm::json::Value::Null)
    reader.readInteger("head_dim", model.headDim, "head_dim", locations);
  reader.readInteger("intermediate_size", model.intermediate, "intermediate", locations);
  reader.readInteger("vocab_size", model.vocab, "vocab", locations);
  reader.readInteger("max_position_embeddings", model.maxPosition, "max_position", locations);
  reader.readNumber("rms_norm_eps", model.layerNormEps, "layer_norm_eps", locations);
  reader.readNumber("rope_theta", model.ropeTheta, "rope_theta", locations);
  reader.readNumber("initializer_range", model.initializerRange, "initializer_range", locations);
  reader.readNumber("attention_dropout", model.attentionDropout, "attention_dropout", locations);
  reader.readBool("tie_word_embeddings", model.tieEmbeddings);
  readRopeScaling(reader, model);
  // No pad_token_id: batches are padded with id 0, whose row trains (padding positions
  // never reach the loss).
  model.bosTokenId = reader.readTokenId("bos_token_id");
  model.eosTokenIds = reader.readTokenIds("eos_token_id");
  std::optional<int64_t> pad = reader.readTokenId("pad_token_id");
  model.padTokenId = pad.value_or(0);
  model.padRowFixed = pad.has_value();
}

void readLlamaConfig(ConfigReader &reader, ModelSpec &model, HeadSpec &) {
  if (std::optional<StringRef> type = reader.fields().getString("model_type"))
    model.modelType = type->str();
  model.dropout = 0.0;
  model.attentionDropout = 0.0;
  model.layerNormEps = 1e-6;
  readDecoderConfig(reader, model);
  reader.readBool("attention_bias", model.qkvBias);
  model.outputBias = model.qkvBias;
  reader.readBool("mlp_bias", model.mlpBias);
  // Mistral's window: attention sees at most sliding_window earlier tokens.
  if (const llvm::json::Value *window = reader.fields().get("sliding_window");
      window && window->kind() != llvm::json::Value::Null)
    reader.readInteger("sliding_window", model.slidingWindow, "sliding_window", model.locations);
}

void readQwen2Config(ConfigReader &reader, ModelSpec &model, HeadSpec &) {
  model.dropout = 0.0;
  model.attentionDropout = 0.0;
  model.layerNormEps = 1e-6;
  readDecoderConfig(reader, model);
  model.qkvBias = true;
  bool slidingWindow = false;
  reader.readBool("use_sliding_window", slidingWindow);
  if (slidingWindow)
    reader.error() << "'use_sliding_window': sliding-window attention is not supported";
}

/// The fields of both, as transformers saves them.
void writeDecoderConfig(const JobSpec &spec, llvm::json::Object &config) {
  const ModelSpec &m = spec.model;
  config["hidden_size"] = m.hidden;
  config["num_hidden_layers"] = m.layers;
  config["num_attention_heads"] = m.heads;
  config["num_key_value_heads"] = m.keyValueHeads();
  config["head_dim"] = m.attentionHeadDim();
  config["intermediate_size"] = m.intermediate;
  config["hidden_act"] = "silu";
  config["vocab_size"] = m.vocab;
  config["max_position_embeddings"] = m.maxPosition;
  config["rms_norm_eps"] = m.layerNormEps;
  config["rope_theta"] = m.ropeTheta;
  config["initializer_range"] = m.initializerRange;
  config["attention_dropout"] = m.attentionDropout;
  config["tie_word_embeddings"] = m.tieEmbeddings;
  if (m.padRowFixed)
    config["pad_token_id"] = m.padTokenId;
  writeSpecialTokenIds(m, config);
  const RopeScaling &scaling = m.ropeScaling;
  if (scaling.type == "default") {
    config["rope_scaling"] = nullptr;
  } else {
    llvm::json::Object rope{{"rope_type", scaling.type}, {"factor", scaling.factor}};
    if (scaling.type == "llama3") {
      rope["low_freq_factor"] = scaling.lowFreqFactor;
      rope["high_freq_factor"] = scaling.highFreqFactor;
      rope["original_max_position_embeddings"] = scaling.originalMaxPositionEmbeddings;
    }
    config["rope_scaling"] = std::move(rope);
  }
}

/// A Llama, or a Mistral saved as Mistral, its sliding_window as read (never active here:
/// JobChecks keeps seq_len within it).
void writeLlamaConfig(const JobSpec &spec, llvm::json::Object &config) {
  const ModelSpec &m = spec.model;
  if (m.modelType == "mistral") {
    config["architectures"] = llvm::json::Array{"MistralForCausalLM"};
    config["model_type"] = "mistral";
    writeDecoderConfig(spec, config);
    config["sliding_window"] =
        m.slidingWindow > 0 ? llvm::json::Value(m.slidingWindow) : llvm::json::Value(nullptr);
    return;
  }
  config["architectures"] = llvm::json::Array{"LlamaForCausalLM"};
  config["model_type"] = "llama";
  writeDecoderConfig(spec, config);
  config["attention_bias"] = m.qkvBias;
  config["mlp_bias"] = m.mlpBias;
}

void writeQwen2Config(const JobSpec &spec, llvm::json::Object &config) {
  config["architectures"] = llvm::json::Array{"Qwen2ForCausalLM"};
  config["model_type"] = "qwen2";
  writeDecoderConfig(spec, config);
  config["use_sliding_window"] = false;
}

const llvm::StringRef kLlamaModelTypes[] = {"llama", "mistral"};
const llvm::StringRef kQwen2ModelTypes[] = {"qwen2"};
const llvm::StringRef kDecoderTasks[] = {"causal_lm"};
const llvm::StringRef kRotaryLoraTargets[] = {"q_proj", "v_proj"};

} // namespace

const FamilyConfig bertc::kLlamaConfig = {"llama",         kLlamaModelTypes,  "tokenizer.json",
                                          kDecoderTasks,   kDecoderModelKeys, kRotaryLoraTargets,
                                          readLlamaConfig, writeLlamaConfig};
const FamilyConfig bertc::kQwen2Config = {"qwen2",         kQwen2ModelTypes,  "tokenizer.json",
                                          kDecoderTasks,   kDecoderModelKeys, kRotaryLoraTargets,
                                          readQwen2Config, writeQwen2Config};
