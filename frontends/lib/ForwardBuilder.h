//===- ForwardBuilder.h - emits a job's forward graph -----------*- C++ -*-===//
//
// Internal to the frontend library: the builder of @micro_step that GraphBuilder.cpp
// drives (the model and task heads) and CustomHeadBuilder.cpp extends (a custom head's
// ops).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include "bert/BertDialect.h"

#include "mlir/IR/Builders.h"

namespace bertc {

/// Emits the ops of @micro_step at the builder's insertion point.
class ForwardBuilder {
public:
  ForwardBuilder(const JobSpec &spec, mlir::OpBuilder &builder)
      : spec(spec), model(spec.model), builder(builder), ctx(*builder.getContext()),
        f32(builder.getF32Type()) {}

  /// Emits the whole forward pass; returns the loss.
  mlir::Value buildLoss();

private:
  mlir::Value embeddings();
  mlir::Value encoderLayer(mlir::Value hidden, mlir::Value mask, int64_t layer);
  mlir::Value classifierLoss(mlir::Value hidden);
  /// task = "span": BertForQuestionAnswering's qa_outputs and span loss.
  mlir::Value spanLoss(mlir::Value hidden);
  /// task = "token-classification": BertForTokenClassification's head and loss.
  mlir::Value tokenClassificationLoss(mlir::Value hidden);
  /// task = "custom": the [[head.layers]] ops over the hidden states (the embeddings'
  /// output, then each encoder layer's), then cross-entropy; null after a diagnostic.
  mlir::Value customHeadLoss(llvm::ArrayRef<mlir::Value> hiddenStates);
  /// One [[head.layers]] op over `operands` (its input, or add's and concat's inputs); null
  /// after a diagnostic.
  mlir::Value customHeadOp(const HeadLayer &layer, llvm::ArrayRef<mlir::Value> operands);

  /// `name` at the location of `key` in `locations`.
  mlir::Location at(llvm::StringRef name, const KeyLocations &locations, llvm::StringRef key) {
    return mlir::NameLoc::get(builder.getStringAttr(name), locations.of(key, ctx));
  }
  mlir::Value input(llvm::StringRef name, int64_t rank, mlir::Location loc);
  /// The task's labels: classes [batch], regression targets f32 [batch], span positions
  /// [batch, 2] or token classes [batch, seq].
  mlir::Value labelsInput();
  mlir::Value param(const llvm::Twine &name, llvm::ArrayRef<int64_t> shape, llvm::StringRef group,
                    llvm::StringRef init, bool decay, const KeyLocations &locations,
                    llvm::StringRef key);
  /// torch.nn.Linear `module` (weight [out, in], bias [out]) applied to `x`.
  mlir::Value linear(mlir::Value x, const llvm::Twine &module, int64_t outFeatures,
                     llvm::StringRef group, const KeyLocations &locations, llvm::StringRef key);
  /// torch.nn.LayerNorm `module` (weight = gamma, bias = beta) applied to `x`.
  mlir::Value layerNorm(mlir::Value x, const llvm::Twine &module, llvm::StringRef group,
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
  mlir::IntegerAttr nextStream() { return builder.getI32IntegerAttr(streamCount++); }

  const JobSpec &spec;
  const ModelSpec &model;
  mlir::OpBuilder &builder;
  mlir::MLIRContext &ctx;
  mlir::Type f32;
  mlir::Value positionIds, tokenTypeIds, inputIds, attentionMask, labels;
  int32_t streamCount = 0;
};

} // namespace bertc
