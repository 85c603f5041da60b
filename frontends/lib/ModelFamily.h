//===- ModelFamily.h - one model architecture of the frontend ---*- C++ -*-===//
//
// Internal to the frontend library. A model family is what differs between architectures
// (BERT, later Llama, Qwen2, GPT-2): the fields of its Hugging Face config.json, the inputs
// its step reads, the graph of its model and of its task heads, and the config.json saved
// with a trained model. Everything else (the job's tables, the task heads every family
// shares, the passes) is written once. A family is chosen by `[model] family`, or by
// config.json's `model_type` when `from` is given.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

namespace bertc {

class ConfigReader;
class ForwardBuilder;

/// One architecture: its config.json, inputs, model graph and task heads.
class ModelFamily {
public:
  virtual ~ModelFamily() = default;

  /// Its `[model] family` name ("bert").
  virtual llvm::StringRef name() const = 0;
  /// The config.json `model_type` values it reads.
  virtual llvm::ArrayRef<llvm::StringRef> modelTypes() const = 0;
  /// The step's inputs besides the labels, in the order they are created; each is int32
  /// [batch, seq] and becomes a row of the trainer's input table.
  virtual llvm::ArrayRef<llvm::StringRef> inputs() const = 0;

  /// Reads the family's fields of a `from` folder's config.json into the spec.
  virtual void readConfig(ConfigReader &reader, ModelSpec &model, HeadSpec &head) const = 0;
  /// Adds the family's fields (model_type, architectures, dimensions) to the config.json
  /// saved with a model trained on `spec`.
  virtual void writeConfig(const JobSpec &spec, llvm::json::Object &config) const = 0;

  /// Emits the model over the step's inputs and returns its hidden states, as Hugging
  /// Face's output_hidden_states: the embeddings' output, then each layer's.
  virtual llvm::SmallVector<mlir::Value> buildModel(ForwardBuilder &forward) const = 0;
  /// Emits the job's task head over `hiddenStates` and its loss; null after a diagnostic.
  virtual mlir::Value buildTaskLoss(ForwardBuilder &forward,
                                    llvm::ArrayRef<mlir::Value> hiddenStates) const = 0;
};

/// The family named `name`, or null.
const ModelFamily *findModelFamily(llvm::StringRef name);
/// The family that reads config.json's `modelType`, or null.
const ModelFamily *findFamilyOfModelType(llvm::StringRef modelType);
/// Every family's name, for `[model] family`'s choices.
llvm::SmallVector<llvm::StringRef> modelFamilyNames();

/// The families (each defined in its own file).
const ModelFamily &bertFamily();

} // namespace bertc
