//===- Gpt2Config.cpp - GPT-2's config.json, read and written -------------===//
//
// The fields of Hugging Face's GPT2Config that bertc reads from a `from` folder (n_embd,
// n_layer, n_head, n_inner, n_positions, the three dropouts, layer_norm_epsilon,
// activation_function), the values it must hold (scaled dot-product attention, no cross
// attention), and the config.json saved with a
// trained model (GPT2LMHeadModel).
//
//===----------------------------------------------------------------------===//

#include "ConfigReader.h"
#include "FamilyConfig.h"

#include "llvm/ADT/STLExtras.h"

using namespace bertc;

namespace {

/// activation_function values bertc builds: the tanh approximation of GELU under its three
/// transformers names (NewGELUActivation, PytorchGELUTanh, FastGELUActivation compute the
/// same function), and the exact GELU.
const StringRef kTanhGelus[] = {"gelu_new", "gelu_pytorch_tanh", "gelu_fast"};

void readActivation(ConfigReader &reader, ModelSpec &model) {
  const llvm::json::Value *value = reader.fields().get("activation_function");
  if (!value)
    return;
  std::optional<StringRef> name = value->getAsString();
  if (name && (*name == "gelu" || llvm::is_contained(kTanhGelus, *name))) {
    model.activation = name->str();
    return;
  }
  std::string written;
  llvm::raw_string_ostream(written) << *value;
  reader.error() << "'activation_function' must be \"gelu_new\", \"gelu_pytorch_tanh\", "
                    "\"gelu_fast\" or \"gelu\" (the activations bertc builds), got "
                 << written;
}

/// A boolean field that must be `expected` when present: a variant bertc does not build.
void requireBool(ConfigReader &reader, StringRef field, bool expected, StringRef why) {
  bool value = expected;
  reader.readBool(field, value);
  if (value != expected)
    reader.error() << "'" << field << "' must be " << (expected ? "true" : "false") << " (" << why
                   << ")";
}

void readGpt2Config(ConfigReader &reader, ModelSpec &model, HeadSpec &) {
  // GPT2Config's defaults, for the fields a config.json may leave out.
  model.vocab = 50257;
  model.maxPosition = 1024;
  model.dropout = model.attentionDropout = 0.1;
  model.layerNormEps = 1e-5;
  model.tieEmbeddings = true;
  model.activation = "gelu_new";
  model.padRowFixed = false;
  model.padTokenId = 0;

  KeyLocations &locations = model.locations;
  reader.readInteger("n_embd", model.hidden, "hidden", locations);
  reader.readInteger("n_layer", model.layers, "layers", locations);
  reader.readInteger("n_head", model.heads, "heads", locations);
  model.intermediate = 4 * model.hidden;
  model.intermediateFromHidden = true;
  if (const llvm::json::Value *inner = reader.fields().get("n_inner");
      inner && inner->kind() != llvm::json::Value::Null) {
    reader.readInteger("n_inner", model.intermediate, "intermediate", locations);
    model.intermediateFromHidden = false;
  }
  reader.readInteger("vocab_size", model.vocab, "vocab", locations);
  reader.readInteger("n_positions", model.maxPosition, "max_position", locations);
  reader.readNumber("layer_norm_epsilon", model.layerNormEps, "layer_norm_eps", locations);
  reader.readNumber("initializer_range", model.initializerRange, "initializer_range", locations);
  reader.readNumber("resid_pdrop", model.dropout, "dropout", locations);
  reader.readNumber("attn_pdrop", model.attentionDropout, "attention_dropout", locations);
  double embeddingDropout = 0.1; // GPT2Config's default, whatever resid_pdrop is
  reader.readNumber("embd_pdrop", embeddingDropout, "embedding_dropout", locations);
  model.embeddingDropout = embeddingDropout;
  readActivation(reader, model);
  reader.readBool("tie_word_embeddings", model.tieEmbeddings);
  requireBool(reader, "scale_attn_weights", true, "bertc's attention divides by sqrt(head dim)");
  requireBool(reader, "scale_attn_by_inverse_layer_idx", false,
              "bertc's attention scales every layer alike");
  requireBool(reader, "add_cross_attention", false, "a decoder alone has no cross-attention");
  // reorder_and_upcast_attn computes the scores in fp32, as bertc's attention always does.
  // GPT2Config's bos and eos default to 50256, GPT-2's <|endoftext|>, where the
  // vocabulary has that row.
  const int64_t endOfText = 50256;
  model.bosTokenId = reader.readTokenId("bos_token_id");
  if (!model.bosTokenId && !reader.fields().get("bos_token_id") && endOfText < model.vocab)
    model.bosTokenId = endOfText;
  model.eosTokenIds = reader.readTokenIds("eos_token_id");
  if (model.eosTokenIds.empty() && !reader.fields().get("eos_token_id") && endOfText < model.vocab)
    model.eosTokenIds = {endOfText};
  // Batches are padded with pad_token_id (else id 0); the row of neither stays fixed.
  if (std::optional<int64_t> pad = reader.readTokenId("pad_token_id"))
    model.padTokenId = *pad;
}

/// GPT2LMHeadModel's config.json, as transformers saves it.
void writeGpt2Config(const JobSpec &spec, llvm::json::Object &config) {
  const ModelSpec &m = spec.model;
  config["architectures"] = llvm::json::Array{"GPT2LMHeadModel"};
  config["model_type"] = "gpt2";
  config["n_embd"] = m.hidden;
  config["n_layer"] = m.layers;
  config["n_head"] = m.heads;
  config["n_inner"] = m.intermediate;
  config["n_positions"] = m.maxPosition;
  config["n_ctx"] = m.maxPosition;
  config["vocab_size"] = m.vocab;
  config["activation_function"] = m.activation.empty() ? "gelu_new" : m.activation;
  config["layer_norm_epsilon"] = m.layerNormEps;
  config["initializer_range"] = m.initializerRange;
  config["resid_pdrop"] = m.dropout;
  config["embd_pdrop"] = m.embeddingDropout.value_or(m.dropout);
  config["attn_pdrop"] = m.attentionDropout;
  config["scale_attn_weights"] = true;
  config["tie_word_embeddings"] = m.tieEmbeddings;
  writeSpecialTokenIds(m, config);
  if (m.padTokenId != 0)
    config["pad_token_id"] = m.padTokenId;
}

const StringRef kGpt2ModelTypes[] = {"gpt2"};
const StringRef kGpt2Tasks[] = {"causal_lm"};
/// Learned positions: of the decoder keys only the tied LM head applies.
const StringRef kGpt2DecoderKeys[] = {"tie_embeddings"};
const StringRef kGpt2LoraTargets[] = {"c_attn"};

} // namespace

const FamilyConfig bertc::kGpt2Config = {"gpt2",         kGpt2ModelTypes,  "tokenizer.json",
                                         kGpt2Tasks,     kGpt2DecoderKeys, kGpt2LoraTargets,
                                         readGpt2Config, writeGpt2Config};
