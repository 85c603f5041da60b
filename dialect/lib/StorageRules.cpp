//===- StorageRules.cpp - what each op keeps in fp32, how a gradient joins its slot -===//
//
// The StorageTypedOpInterface methods that differ from the defaults (every float operand
// and result in the storage type), which -bertc-mixed-precision asks, and the
// SlotAccumulableOpInterface rules that -bertc-accumulate-in-gemm asks.
//
//===----------------------------------------------------------------------===//

#include "VerifierChecks.h"

using namespace mlir;
using namespace mlir::bert;

// A parameter's gradient stays fp32, so that its accumulation over micro-batches rounds as
// little as possible.
bool EmbeddingGradOp::keepsF32Result(unsigned) { return true; }
bool LinearGradWeightOp::keepsF32Result(unsigned) { return true; }
bool BiasGradOp::keepsF32Result(unsigned) { return true; }
// LayerNorm's gamma and beta gradients, RMSNorm's weight gradient.
bool LayerNormGradOp::keepsF32Result(unsigned index) { return index > 0; }
bool RmsNormGradOp::keepsF32Result(unsigned index) { return index > 0; }
// The softmax statistics (lse), which the backward exponentiates.
bool AttentionOp::keepsF32Result(unsigned index) { return index > 0; }
// The loss; the LM head's weight gradient; the loss's gradient, a scalar read as it is.
bool LmHeadLossOp::keepsF32Result(unsigned) { return true; }
bool LmHeadLossGradOp::keepsF32Result(unsigned index) { return index == 1; }
bool LmHeadLossGradOp::readsOperandAsIs(unsigned index) { return index == 0; }

bool AttentionGradOp::readsOperandAsIs(unsigned index) { return getOperand(index) == getLse(); }
// The gradient is added into an fp32 slot in its own type.
bool AccumulateGradOp::readsOperandAsIs(unsigned) { return true; }

// Two gradients of a parameter used twice (tied weights) are fp32 already.
bool AddOp::computesInF32() {
  return verify::tensorType(getLhs()).getElementType().isF32() &&
         verify::tensorType(getRhs()).getElementType().isF32();
}

Operation *LinearGradWeightOp::buildSlotAccumulation(OpBuilder &builder, Value param) {
  return builder.create<AccumulateLinearGradWeightOp>(getLoc(), param, getResultGrad(), getInput(),
                                                      getTf32());
}

Operation *BiasGradOp::buildSlotAccumulation(OpBuilder &builder, Value param) {
  return builder.create<AccumulateBiasGradOp>(getLoc(), param, getResultGrad());
}

Operation *EmbeddingGradOp::buildSlotAccumulation(OpBuilder &builder, Value param) {
  return builder.create<AccumulateEmbeddingGradOp>(getLoc(), param, getResultGrad(), getIds(),
                                                   getPaddingIdxAttr());
}
