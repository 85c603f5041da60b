//===- ForwardBuilder.h - emits a job's forward graph -----------*- C++ -*-===//
//
// Internal to the frontend library: the builder of @micro_step. GraphBuilder.cpp drives it
// (the step's inputs, then the family's model and task head); a model family
// (ModelFamily.h) builds with its blocks (parameters, linear, LayerNorm, dropout); the task
// heads every family shares are here too (TaskHeads.cpp, and CustomHeadBuilder.cpp for a
// custom head's ops).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ModelFamily.h"

#include "bertc/frontend/JobSpec.h"

#include "bert/BertDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <set>

namespace bertc {

/// Emits the ops of @micro_step at the builder's insertion point.
class ForwardBuilder {
public:
  ForwardBuilder(const JobSpec &spec, const ModelFamily &family, mlir::OpBuilder &builder)
      : spec(spec), model(spec.model), family(family), builder(builder), ctx(*builder.getContext()),
        f32(builder.getF32Type()) {}

  /// Emits the whole forward pass; returns the loss, or null after a diagnostic.
  mlir::Value buildLoss();

  const JobSpec &job() const { return spec; }
  mlir::OpBuilder &opBuilder() { return builder; }
  mlir::MLIRContext &context() { return ctx; }
  /// The step's input `name` (one of the family's inputs()).
  mlir::Value modelInput(llvm::StringRef name) const { return inputs.lookup(name); }
  /// The task's labels: classes [batch], regression targets f32 [batch], span positions
  /// [batch, 2] or token classes [batch, seq].
  mlir::Value labelsInput() const { return labels; }

  /// The heads every family shares, each over the last hidden state: task = "span" (a
  /// qa_outputs projection and the span loss, as *ForQuestionAnswering) and
  /// "token-classification" (dropout, classifier and per-token loss, as
  /// *ForTokenClassification).
  mlir::Value spanLoss(mlir::Value hidden);
  mlir::Value tokenClassificationLoss(mlir::Value hidden);
  /// task = "custom": the [[head.layers]] ops over the hidden states (the embeddings'
  /// output, then each layer's), then cross-entropy; null after a diagnostic.
  mlir::Value customHeadLoss(llvm::ArrayRef<mlir::Value> hiddenStates);

  /// `name` at the location of `key` in `locations`.
  mlir::Location at(llvm::StringRef name, const KeyLocations &locations, llvm::StringRef key) {
    return mlir::NameLoc::get(builder.getStringAttr(name), locations.of(key, ctx));
  }
  /// The parameter `name`: a new bert.param, or the one of that name emitted before (a
  /// tied weight read twice).
  mlir::Value param(const llvm::Twine &name, llvm::ArrayRef<int64_t> shape, llvm::StringRef group,
                    llvm::StringRef init, bool decay, const KeyLocations &locations,
                    llvm::StringRef key);
  /// torch.nn.Linear `module` (weight [out, in], bias [out]) applied to `x`; without
  /// `bias`, torch.nn.Linear(bias=False): the weight alone (a decoder's projections).
  mlir::Value linear(mlir::Value x, const llvm::Twine &module, int64_t outFeatures,
                     llvm::StringRef group, const KeyLocations &locations, llvm::StringRef key,
                     bool bias = true);
  /// transformers' Conv1D `module` applied to `x`: a linear layer whose checkpoints hold
  /// the weight as [in, out] (GPT-2's projections); the step reads it as [out, in].
  /// `initScale`, when set, narrows the weight's seed-drawn init (bert.param init_scale).
  mlir::Value conv1D(mlir::Value x, const llvm::Twine &module, int64_t outFeatures,
                     llvm::StringRef group, const KeyLocations &locations, llvm::StringRef key,
                     std::optional<double> initScale = std::nullopt);
  /// The layers' LoRA adapters' names for adapter_config.json's target_modules: [lora]
  /// targets as written, or for "all-linear" the last parts of the adapted layers' names.
  std::vector<std::string> adapterTargetModules() const;
  /// torch.nn.LayerNorm `module` (weight = gamma, bias = beta) applied to `x`.
  mlir::Value layerNorm(mlir::Value x, const llvm::Twine &module, llvm::StringRef group,
                        const KeyLocations &locations, llvm::StringRef key);
  /// An RMSNorm `module` (weight only; LlamaRMSNorm) applied to `x`.
  mlir::Value rmsNorm(mlir::Value x, const llvm::Twine &module, llvm::StringRef group,
                      const KeyLocations &locations, llvm::StringRef key);
  mlir::Value dropout(mlir::Value x, double rate, mlir::Location loc);
  mlir::Value add(mlir::Value lhs, mlir::Value rhs, mlir::Location loc) {
    return builder.create<mlir::bert::AddOp>(loc, lhs.getType(), lhs, rhs);
  }
  /// [batch, seq, features].
  mlir::RankedTensorType activationType(int64_t features) {
    return mlir::RankedTensorType::get(
        {mlir::ShapedType::kDynamic, mlir::ShapedType::kDynamic, features}, f32);
  }
  /// `x`'s type with the last dimension replaced by `features`.
  mlir::RankedTensorType withLastDim(mlir::Value x, int64_t features) {
    llvm::SmallVector<int64_t> shape(llvm::cast<mlir::RankedTensorType>(x.getType()).getShape());
    shape.back() = features;
    return mlir::RankedTensorType::get(shape, f32);
  }
  /// The next counter-based random stream (dropout and attention get 0, 1, 2, ... in
  /// program order).
  mlir::IntegerAttr nextStream() { return builder.getI32IntegerAttr(streamCount++); }
  /// The cross-entropy of `logits` against the labels, as the loss.
  mlir::Value crossEntropyLoss(mlir::Value logits, mlir::Location loc, float scale = 1.0f);
  /// A causal LM's loss: the LM head `weight` ([vocab, hidden]) over `hidden`, then the
  /// cross-entropy of each token against its next-token label, a chunk of tokens at a time
  /// (bert.lm_head_loss: the [tokens, vocab] logits are never formed).
  mlir::Value languageModelLoss(mlir::Value hidden, mlir::Value weight, mlir::Location loc);
  /// task = "causal_lm" over the last hidden state: the LM head (`wordEmbeddings` when
  /// [model] ties them, else lm_head.weight) and its loss.
  mlir::Value causalLmLoss(mlir::Value hidden, mlir::Value wordEmbeddings);

private:
  mlir::Value createParam(const llvm::Twine &name, llvm::ArrayRef<int64_t> shape,
                          llvm::StringRef group, llvm::StringRef init, bool decay, bool trainable,
                          const KeyLocations &locations, llvm::StringRef key);
  /// What a linear layer's GEMM reads of its `weight` parameter: the parameter, or, for a
  /// QLoRA base ([lora] base = "nf4" or "int8"), the weight made a quantized parameter and
  /// dequantized for the GEMM. Only the frozen layers' weights are quantized; embeddings,
  /// the LM head and task heads stay as the precision stores them (LoraAdapter.cpp).
  mlir::Value baseWeight(mlir::Value weight, llvm::StringRef group);
  /// `projected`, the output of linear layer `module` over `x`, plus its LoRA adapter's
  /// when [lora] targets the layer (LoraAdapter.cpp).
  mlir::Value withAdapter(mlir::Value x, mlir::Value projected, llvm::StringRef module,
                          llvm::StringRef group);
  /// Reports each [lora] target that names no layer of the model, and a [train] freeze that
  /// leaves no adapter (nor a task head) to train.
  mlir::LogicalResult checkLoraTargets();
  /// One [[head.layers]] op over `operands` (its input, or add's and concat's inputs); null
  /// after a diagnostic.
  mlir::Value customHeadOp(const HeadLayer &layer, llvm::ArrayRef<mlir::Value> operands);
  mlir::Value input(llvm::StringRef name, int64_t rank, mlir::Location loc);
  mlir::Value buildLabelsInput();

  const JobSpec &spec;
  const ModelSpec &model;
  const ModelFamily &family;
  mlir::OpBuilder &builder;
  mlir::MLIRContext &ctx;
  mlir::Type f32;
  llvm::StringMap<mlir::Value> inputs;
  llvm::StringMap<mlir::Value> params;
  /// The last parts of the model's linear layers' names (the task head's and the LM
  /// head's left out), the adapted layers' names, and the [lora] targets that named one.
  std::set<std::string> linearModules;
  std::vector<std::string> adaptedModules;
  llvm::StringSet<> matchedTargets;
  mlir::Value labels;
  int32_t streamCount = 0;
};

} // namespace bertc
