//===- HFConfigWriter.cpp - a job's model as a Hugging Face config --------===//

#include "bertc/frontend/HFConfigWriter.h"

#include "bertc/abi/trainer.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace bertc {

namespace {

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

} // namespace

std::string huggingFaceConfigJson(const JobSpec &spec) {
  const ModelSpec &m = spec.model;
  // The names of the `from` folder's classes where they are as many, else HF's defaults.
  const std::vector<std::string> &names = spec.head.labelNames;
  bool named = int64_t(names.size()) == spec.head.labels;
  llvm::json::Object id2label, label2id;
  for (int64_t i = 0; i < spec.head.labels; ++i) {
    std::string name = named ? names[size_t(i)] : "LABEL_" + std::to_string(i);
    id2label[std::to_string(i)] = name;
    label2id[name] = i;
  }
  llvm::json::Object config{
      {"architectures", llvm::json::Array{architectureOf(spec.head.task)}},
      {"model_type", "bert"},
      {"hidden_size", m.hidden},
      {"num_hidden_layers", m.layers},
      {"num_attention_heads", m.heads},
      {"intermediate_size", m.intermediate},
      {"hidden_act", "gelu"},
      {"vocab_size", m.vocab},
      {"max_position_embeddings", m.maxPosition},
      {"type_vocab_size", m.typeVocab},
      {"hidden_dropout_prob", m.dropout},
      {"attention_probs_dropout_prob", m.attentionDropout},
      {"layer_norm_eps", m.layerNormEps},
      {"initializer_range", m.initializerRange},
      {"position_embedding_type", "absolute"},
      {"pad_token_id", kPadTokenId},
      {"id2label", std::move(id2label)},
      {"label2id", std::move(label2id)},
  };
  if (spec.head.dropout)
    config["classifier_dropout"] = *spec.head.dropout;
  if (spec.head.task == "classification" && spec.head.labels == 1)
    config["problem_type"] = "regression";
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(config))).str();
}

} // namespace bertc
