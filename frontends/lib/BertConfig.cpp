//===- BertConfig.cpp - BERT's config.json, read and written -------------===//
//
// The fields of Hugging Face's BertConfig that bertc reads from a `from` folder (and the
// values it must hold: GELU, absolute positions, [PAD] as id 0), and the config.json saved
// with a trained model, naming the transformers class of its head.
//
//===----------------------------------------------------------------------===//

#include "ConfigReader.h"
#include "FamilyConfig.h"

using namespace bertc;

namespace {

void readBertConfig(ConfigReader &reader, ModelSpec &model, HeadSpec &head) {
  reader.requireString("hidden_act", "gelu");
  reader.requireString("position_embedding_type", "absolute");
  reader.requireInteger("pad_token_id", model.padTokenId,
                        "bertc pads batches with [PAD], id " + std::to_string(model.padTokenId));
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
}

/// The transformers class that holds `task`'s head. A custom head is no transformers class:
/// its folder loads as the encoder alone (BertModel, whose pooler it lacks), head.* aside.
const char *architectureOf(const std::string &task) {
  if (task == "custom")
    return "BertModel";
  if (task == "span")
    return "BertForQuestionAnswering";
  if (task == "token-classification")
    return "BertForTokenClassification";
  return "BertForSequenceClassification";
}

void writeBertConfig(const JobSpec &spec, llvm::json::Object &config) {
  const ModelSpec &m = spec.model;
  config["architectures"] = llvm::json::Array{architectureOf(spec.head.task)};
  config["model_type"] = "bert";
  config["hidden_size"] = m.hidden;
  config["num_hidden_layers"] = m.layers;
  config["num_attention_heads"] = m.heads;
  config["intermediate_size"] = m.intermediate;
  config["hidden_act"] = "gelu";
  config["vocab_size"] = m.vocab;
  config["max_position_embeddings"] = m.maxPosition;
  config["type_vocab_size"] = m.typeVocab;
  config["hidden_dropout_prob"] = m.dropout;
  config["attention_probs_dropout_prob"] = m.attentionDropout;
  config["layer_norm_eps"] = m.layerNormEps;
  config["initializer_range"] = m.initializerRange;
  config["position_embedding_type"] = "absolute";
  config["pad_token_id"] = m.padTokenId;
}

const llvm::StringRef kBertModelTypes[] = {"bert"};
const llvm::StringRef kBertTasks[] = {"classification", "span", "token-classification", "custom"};
const llvm::StringRef kBertLoraTargets[] = {"query", "value"};

} // namespace

const FamilyConfig bertc::kBertConfig = {"bert",         kBertModelTypes,    "vocab.txt",
                                         kBertTasks,     /*decoderKeys=*/{}, kBertLoraTargets,
                                         readBertConfig, writeBertConfig};
