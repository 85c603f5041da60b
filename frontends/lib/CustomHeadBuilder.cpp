//===- CustomHeadBuilder.cpp - a custom head's ops into the forward graph -===//
//
// task = "custom": the [[head.layers]] ops in order, each over the previous op's output or
// the outputs it names ("encoder", "embeddings", "encoder.layer.N", or an earlier op's `as`;
// CustomHeadChecks.cpp has checked the names), then a softmax cross-entropy over the last
// op's [batch, labels] logits. The
// shapes are checked here, each error at the op that cannot take its input.
//
//===----------------------------------------------------------------------===//

#include "ForwardBuilder.h"

#include "llvm/ADT/StringMap.h"

using namespace bertc;
using namespace mlir;

namespace {
/// "[batch, seq, 16]" or "[batch, 16]".
std::string shapeText(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  std::string text = type.getRank() == 3 ? "[batch, seq, " : "[batch, ";
  return text + std::to_string(type.getShape().back()) + "]";
}

} // namespace

Value ForwardBuilder::customHeadLoss(ArrayRef<Value> hiddenStates) {
  llvm::StringMap<Value> outputs{{kEncoderOutput, hiddenStates.back()},
                                 {kEmbeddingsOutput, hiddenStates.front()}};
  for (auto [layer, state] : llvm::enumerate(hiddenStates.drop_front()))
    outputs[kEncoderLayerOutput + std::to_string(layer)] = state;
  Value x = hiddenStates.back();
  for (const HeadLayer &layer : spec.head.layers) {
    SmallVector<Value> operands;
    for (const std::string &name : layer.inputs)
      operands.push_back(outputs.lookup(name));
    if (operands.empty())
      operands.push_back(layer.input.empty() ? x : outputs.lookup(layer.input));
    x = customHeadOp(layer, operands);
    if (!x)
      return nullptr;
    // Each op's inputs are within the limit, so its width is far from overflowing.
    if (int64_t features = cast<RankedTensorType>(x.getType()).getShape().back();
        features > kMaxHeadFeatures) {
      emitError(layer.locations.of("op", ctx))
          << "op '" << layer.op << "' would give " << features << " features, more than "
          << kMaxHeadFeatures << " (bertc's limit: the widest flatten of the largest model)";
      return nullptr;
    }
    if (!layer.as.empty())
      outputs[layer.as] = x;
  }
  auto logits = cast<RankedTensorType>(x.getType());
  if (logits.getRank() != 2 || logits.getShape().back() != spec.head.labels) {
    emitError(spec.head.layers.back().locations.of("op", ctx))
        << "the custom head must end in [batch, " << spec.head.labels
        << "] logits (head.labels), but its last op gives " << shapeText(x);
    return nullptr;
  }
  return crossEntropyLoss(x, at("loss", spec.head.locations, "task"));
}

Value ForwardBuilder::customHeadOp(const HeadLayer &layer, ArrayRef<Value> operands) {
  const KeyLocations &ll = layer.locations;
  // Reports name the op's tensors by its parameters' name, else by its output's.
  const std::string &shown = ll.keys.count("name") || layer.as.empty() ? layer.name : layer.as;
  Location loc = at("head." + shown, ll, "op");
  Value x = operands.front();
  auto type = cast<RankedTensorType>(x.getType());
  auto pooled = [&] {
    return RankedTensorType::get({ShapedType::kDynamic, type.getShape().back()}, f32);
  };
  bool readsTokens = layer.op == "flatten" || layer.op == "select_token" || layer.op == "mean" ||
                     layer.op == "max";
  if (readsTokens && type.getRank() != 3) {
    emitError(ll.of("op", ctx)) << "head op '" << layer.op
                                << "' needs a [batch, seq, features] input, got a " << shapeText(x)
                                << " one";
    return nullptr;
  }
  if (layer.op == "flatten") {
    auto flat = RankedTensorType::get(
        {ShapedType::kDynamic, spec.train.seqLen * type.getShape().back()}, f32);
    return builder.create<bert::FlattenOp>(loc, flat, x);
  }
  if (layer.op == "select_token")
    return builder.create<bert::SelectTokenOp>(loc, pooled(), x,
                                               builder.getI64IntegerAttr(layer.index));
  // Mean and max pooling over each row's real tokens (its attention mask).
  if (layer.op == "mean")
    return builder.create<bert::MeanTokensOp>(loc, pooled(), x, modelInput("attention_mask"));
  if (layer.op == "max")
    return builder.create<bert::MaxTokensOp>(loc, pooled(), x, modelInput("attention_mask"));
  if (layer.op == "linear")
    return linear(x, "head." + layer.name, layer.out, "head", ll, "op");
  if (layer.op == "gelu")
    return builder.create<bert::GeluOp>(loc, type, x);
  if (layer.op == "gelu_tanh")
    return builder.create<bert::GeluOp>(loc, type, x, bert::GeluApproximation::Tanh);
  if (layer.op == "tanh")
    return builder.create<bert::TanhOp>(loc, type, x);
  if (layer.op == "relu")
    return builder.create<bert::ReluOp>(loc, type, x);
  if (layer.op == "dropout")
    return dropout(x, layer.rate, loc);
  if (layer.op == "layernorm")
    return layerNorm(x, "head." + layer.name, "head", ll, "op");
  if (layer.op == "slice") {
    if (layer.end > type.getShape().back()) {
      emitError(ll.of("end", ctx))
          << "key 'head.layers.end' (" << layer.end << ") is past the last feature of the slice's "
          << shapeText(x) << " input";
      return nullptr;
    }
    return builder.create<bert::SliceOp>(loc, withLastDim(x, layer.end - layer.start), x,
                                         builder.getI64IntegerAttr(layer.start));
  }
  // add and concat: inputs of one shape, or of one rank and leading dimensions.
  int64_t features = 0;
  for (auto [name, operand] : llvm::zip_equal(layer.inputs, operands)) {
    auto operandType = cast<RankedTensorType>(operand.getType());
    bool fits = layer.op == "add" ? operandType == type : operandType.getRank() == type.getRank();
    if (!fits) {
      emitError(ll.of("inputs", ctx))
          << "op '" << layer.op << "' needs inputs of "
          << (layer.op == "add" ? "one shape"
                                : "one rank (all [batch, features] or all "
                                  "[batch, seq, features])")
          << ": '" << layer.inputs.front() << "' is " << shapeText(x) << ", '" << name << "' is "
          << shapeText(operand);
      return nullptr;
    }
    features += operandType.getShape().back();
  }
  if (layer.op == "add") {
    Value sum = x;
    for (Value operand : operands.drop_front())
      sum = add(sum, operand, loc);
    return sum;
  }
  return builder.create<bert::ConcatOp>(loc, withLastDim(x, features), operands);
}
