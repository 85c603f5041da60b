//===- TaskHeads.cpp - the task heads every model family shares ----------===//
//
// Hugging Face's *ForQuestionAnswering and *ForTokenClassification heads, which every
// family builds the same way over its last hidden state.
//
//===----------------------------------------------------------------------===//

#include "ForwardBuilder.h"

using namespace bertc;
using namespace mlir;

// HF: logits = qa_outputs(sequence_output) split into start and end logits [batch, seq];
// loss = (CE(start_logits, start_positions) + CE(end_logits, end_positions)) / 2. The
// transpose makes them two rows of one [batch, 2, seq] cross-entropy with scale 1/2.
Value ForwardBuilder::spanLoss(Value hidden) {
  const KeyLocations &hl = spec.head.locations;
  Value perToken = linear(hidden, "qa_outputs", 2, "classifier", hl, "task");
  auto startsEnds = RankedTensorType::get({ShapedType::kDynamic, 2, ShapedType::kDynamic}, f32);
  Value positions =
      builder.create<bert::TransposeOp>(at("qa_outputs.split", hl, "task"), startsEnds, perToken);
  return crossEntropyLoss(positions, at("loss", hl, "task"), 0.5f);
}

// HF: logits = classifier(dropout(sequence_output)); CE over tokens, -100 ignored.
Value ForwardBuilder::tokenClassificationLoss(Value hidden) {
  const KeyLocations &hl = spec.head.locations;
  double rate = spec.head.dropout.value_or(model.dropout);
  Value dropped =
      dropout(hidden, rate, at("dropout", hl, spec.head.dropout ? "dropout" : "labels"));
  Value logits = linear(dropped, "classifier", spec.head.labels, "classifier", hl, "labels");
  return crossEntropyLoss(logits, at("loss", hl, "task"));
}
