//===- ModelFamily.h - one model architecture of the frontend ---*- C++ -*-===//
//
// Internal to the frontend library. A model family is what differs between architectures
// (BERT, Llama, Qwen2, GPT-2): the inputs its step reads and the graph of its model
// and of its task heads; its config.json, read and written, is its FamilyConfig
// (FamilyConfig.h). Everything else (the job's tables, the task heads every family
// shares, the passes) is written once. A family is chosen by `[model] family`, or by
// config.json's `model_type` when `from` is given.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace bertc {

class ForwardBuilder;

/// One architecture: its config.json, inputs, model graph and task heads.
class ModelFamily {
public:
  virtual ~ModelFamily() = default;

  /// Its `[model] family` name ("bert"), its FamilyConfig's.
  virtual llvm::StringRef name() const = 0;
  /// The step's inputs besides the labels, in the order they are created; each is int32
  /// [batch, seq] and becomes a row of the trainer's input table.
  virtual llvm::ArrayRef<llvm::StringRef> inputs() const = 0;

  /// Emits the model over the step's inputs and returns its hidden states, as Hugging
  /// Face's output_hidden_states: the embeddings' output, then each layer's.
  virtual llvm::SmallVector<mlir::Value> buildModel(ForwardBuilder &forward) const = 0;
  /// Emits the job's task head over `hiddenStates` and its loss; null after a diagnostic.
  virtual mlir::Value buildTaskLoss(ForwardBuilder &forward,
                                    llvm::ArrayRef<mlir::Value> hiddenStates) const = 0;
};

/// The family named `name`, or null.
const ModelFamily *findModelFamily(llvm::StringRef name);

/// The families (each defined in its own file).
const ModelFamily &bertFamily();
const ModelFamily &llamaFamily();
const ModelFamily &qwen2Family();
const ModelFamily &gpt2Family();

} // namespace bertc
