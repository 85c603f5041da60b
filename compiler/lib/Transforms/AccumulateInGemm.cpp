//===- AccumulateInGemm.cpp - gradients straight into their slots ---------===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

namespace bertc {
#define GEN_PASS_DEF_ACCUMULATEINGEMM
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// Whether `value` exists before `op` in op's block (a block argument or an op above it).
bool availableBefore(Value value, Operation *op) {
  Operation *def = value.getDefiningOp();
  return !def || (def->getBlock() == op->getBlock() && def->isBeforeInBlock(op));
}

/// Folds `add` into the GEMM of one of its operands when that GEMM is a linear_grad_input
/// read only by the add, and the other operand exists before it: one
/// linear_grad_input_add at the GEMM's place, so nothing else moves. Not when the addend
/// is also the GEMM's input: the result may take over the addend's bytes, which the GEMM
/// still reads.
void foldIntoGemm(AddOp add) {
  for (auto [gemmOperand, addend] :
       {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())}) {
    auto gemm = gemmOperand.getDefiningOp<LinearGradInputOp>();
    if (!gemm || !gemm->hasOneUse() || !availableBefore(addend, gemm) ||
        llvm::is_contained(gemm->getOperands(), addend))
      continue;
    OpBuilder builder(gemm);
    auto fused =
        builder.create<LinearGradInputAddOp>(gemm.getLoc(), add.getType(), gemm.getResultGrad(),
                                             gemm.getWeight(), addend, gemm.getTf32());
    add.replaceAllUsesWith(fused.getInputGrad());
    add.erase();
    gemm.erase();
    return;
  }
}

/// The accumulate_grad that is `grad`'s only reader, if it is.
AccumulateGradOp soleAccumulation(Value grad) {
  return grad.hasOneUse() ? dyn_cast<AccumulateGradOp>(*grad.getUsers().begin())
                          : AccumulateGradOp();
}

/// Folds a layernorm_grad whose gamma and beta gradients are each only accumulated, gamma's
/// into the slot of the gamma it scaled by, into one accumulate_layernorm_grad at its place.
void foldIntoLayerNormGrad(LayerNormGradOp grad) {
  AccumulateGradOp gamma = soleAccumulation(grad.getGammaGrad());
  AccumulateGradOp beta = soleAccumulation(grad.getBetaGrad());
  if (!gamma || !beta || gamma.getParam() != grad.getGamma())
    return;
  OpBuilder builder(grad);
  auto fused = builder.create<AccumulateLayerNormGradOp>(
      grad.getLoc(), grad.getInputGrad().getType(), gamma.getParam(), beta.getParam(),
      grad.getResultGrad(), grad.getInput(), grad.getEpsilon());
  grad.getInputGrad().replaceAllUsesWith(fused.getInputGrad());
  gamma.erase();
  beta.erase();
  grad.erase();
}

/// The gelu_grad or dropout_grad `backward` and a bias gradient of what it writes as one op
/// at its place: added into `param`'s slot (gelu_grad_accumulate_bias,
/// dropout_grad_accumulate_bias) or, without `param`, a second result of type `sumType`
/// (gelu_grad_bias, dropout_grad_bias), with the backward's attributes (a GELU's
/// approximation, a dropout's rate and stream). Null when `backward` is neither; the caller
/// replaces the uses and erases the pair.
Operation *withBiasGradient(Operation *backward, Value param, Type sumType) {
  OpBuilder builder(backward);
  Type dx = backward->getResult(0).getType();
  if (auto gelu = dyn_cast<GeluGradOp>(backward)) {
    if (param)
      return builder.create<GeluGradAccumulateBiasOp>(gelu.getLoc(), dx, param,
                                                      gelu.getResultGrad(), gelu.getInput(),
                                                      gelu.getApproximateAttr());
    return builder.create<GeluGradBiasOp>(gelu.getLoc(), TypeRange{dx, sumType},
                                          gelu.getResultGrad(), gelu.getInput(),
                                          gelu.getApproximateAttr());
  }
  if (auto dropout = dyn_cast<DropoutGradOp>(backward)) {
    if (param)
      return builder.create<DropoutGradAccumulateBiasOp>(
          dropout.getLoc(), dx, param, dropout.getResultGrad(), dropout.getRateAttr(),
          dropout.getStreamAttr());
    return builder.create<DropoutGradBiasOp>(dropout.getLoc(), TypeRange{dx, sumType},
                                             dropout.getResultGrad(), dropout.getRateAttr(),
                                             dropout.getStreamAttr());
  }
  return nullptr;
}

/// Folds a bias gradient's accumulation into the gelu_grad or dropout_grad that writes the
/// gradient it sums, whose column sums then add what it writes into the bias's slot.
void foldIntoBackward(AccumulateBiasGradOp accumulation) {
  Operation *backward = accumulation.getResultGrad().getDefiningOp();
  if (!backward || !availableBefore(accumulation.getParam(), backward))
    return;
  Operation *fused = withBiasGradient(backward, accumulation.getParam(), Type());
  if (!fused)
    return;
  backward->getResult(0).replaceAllUsesWith(fused->getResult(0));
  accumulation.erase();
  backward->erase();
}

/// Folds a bias gradient that no slot accumulates (an update in the backward reads it) into
/// the gelu_grad or dropout_grad that writes the gradient it sums, as its second result.
void foldIntoBackward(BiasGradOp sum) {
  Operation *backward = sum.getResultGrad().getDefiningOp();
  Operation *fused = backward ? withBiasGradient(backward, Value(), sum.getType()) : nullptr;
  if (!fused)
    return;
  backward->getResult(0).replaceAllUsesWith(fused->getResult(0));
  sum.getResult().replaceAllUsesWith(fused->getResult(1));
  sum.erase();
  backward->erase();
}

/// Splits the accumulation of a parameter's gradients summed by `add`s (a parameter read
/// twice: a tied embedding's table and LM head) into one accumulation per gradient, each
/// of which may then fold into the op computing it, so no summed [vocab, hidden] fp32
/// tensor exists. Only adds that nothing else reads.
void splitSummedAccumulations(Region &body) {
  SmallVector<AccumulateGradOp> pending = llvm::to_vector(body.getOps<AccumulateGradOp>());
  while (!pending.empty()) {
    AccumulateGradOp accumulation = pending.pop_back_val();
    auto add = accumulation.getGrad().getDefiningOp<AddOp>();
    if (!add || !add->hasOneUse())
      continue;
    OpBuilder builder(accumulation);
    for (Value grad : {add.getLhs(), add.getRhs()})
      pending.push_back(
          builder.create<AccumulateGradOp>(accumulation.getLoc(), accumulation.getParam(), grad));
    accumulation.erase();
    add.erase();
  }
}

/// Folds the accumulation of an LM head loss's weight gradient, its only reader, into one
/// accumulate_lm_head_loss_grad at the gradient op's place.
void foldIntoLmHeadLossGrad(AccumulateGradOp accumulation) {
  auto grad = accumulation.getGrad().getDefiningOp<LmHeadLossGradOp>();
  if (!grad || grad.getWeightGrad() != accumulation.getGrad() ||
      !accumulation.getGrad().hasOneUse() || accumulation.getParam() != grad.getWeight())
    return;
  OpBuilder builder(grad);
  auto fused = builder.create<AccumulateLmHeadLossGradOp>(
      grad.getLoc(), grad.getHiddenGrad().getType(), accumulation.getParam(), grad.getResultGrad(),
      grad.getHidden(), grad.getLabels(), grad.getTokenChunkAttr(), grad.getScaleAttr());
  grad.getHiddenGrad().replaceAllUsesWith(fused.getHiddenGrad());
  accumulation.erase();
  grad.erase();
}

struct AccumulateInGemmPass : bertc::impl::AccumulateInGemmBase<AccumulateInGemmPass> {
  void runOnOperation() override {
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(getOperation());
    if (failed(microStep))
      return signalPassFailure();
    // Each fold erases ops around the one it starts from: a copy of each list is walked.
    Region &body = microStep->getBody();
    splitSummedAccumulations(body);
    for (AddOp add : llvm::to_vector(body.getOps<AddOp>()))
      foldIntoGemm(add);
    for (AccumulateGradOp accumulation : llvm::to_vector(body.getOps<AccumulateGradOp>()))
      foldIntoLmHeadLossGrad(accumulation);
    for (AccumulateGradOp accumulation : llvm::to_vector(body.getOps<AccumulateGradOp>())) {
      Operation *grad = accumulation.getGrad().getDefiningOp();
      if (!grad || !grad->hasOneUse())
        continue;
      auto accumulable = dyn_cast<SlotAccumulableOpInterface>(grad);
      if (!accumulable)
        continue;
      OpBuilder builder(grad);
      accumulable.buildSlotAccumulation(builder, accumulation.getParam());
      accumulation.erase();
      grad->erase();
    }
    for (LayerNormGradOp grad : llvm::to_vector(body.getOps<LayerNormGradOp>()))
      foldIntoLayerNormGrad(grad);
    for (AccumulateBiasGradOp accumulation : llvm::to_vector(body.getOps<AccumulateBiasGradOp>()))
      foldIntoBackward(accumulation);
    for (BiasGradOp sum : llvm::to_vector(body.getOps<BiasGradOp>()))
      foldIntoBackward(sum);
  }
};

} // namespace
