//===- MixedPrecision.cpp - 16-bit storage with fp32 compute --------------===//
//
// Retypes a training module for bf16 or fp16 storage (see Passes.td):
//   1. every parameter, in both step functions, becomes a 16-bit working copy (but a
//      quantized one, which `bert.dequantize` reads in the storage type);
//   2. @micro_step is walked in program order. An op with 16-bit kernels (the
//      StorageTypedOpInterface) gets its float operands cast to the type it computes in
//      (the storage type, or f32 where the op says so) and its results retyped, except
//      the operands and results the op keeps in their own type or in f32 (weight
//      gradients, attention's lse). Any other op keeps computing in f32: its 16-bit
//      operands are cast to f32 and its results left as they are;
//   3. with fp16, the backward's seed is marked `loss_scaled`;
//   4. the module records `bert.precision`.
// Producers come before their readers, so every operand already has its final type when
// its reader is visited.
//
//===----------------------------------------------------------------------===//

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

namespace bertc {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

Type withElementType(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

class Retyper {
public:
  Retyper(Type storage) : storage(storage), f32(Float32Type::get(storage.getContext())) {}

  /// Step 2 for one op of @micro_step.
  void retype(Operation *op) {
    if (isa<ParamOp, InputOp, FillOp>(op))
      return;
    if (isa<func::ReturnOp>(op)) {
      auto func = op->getParentOfType<func::FuncOp>();
      for (auto [operand, type] : llvm::zip(op->getOpOperands(), func.getResultTypes()))
        castOperand(op, operand, type);
      return;
    }
    auto typed = dyn_cast<StorageTypedOpInterface>(op);
    if (!typed) {
      for (OpOperand &operand : op->getOpOperands())
        if (isFloatTensor(operand.get().getType()))
          castOperand(op, operand, withElementType(operand.get().getType(), f32));
      return;
    }
    Type compute = typed.computesInF32() ? f32 : storage;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isFloatTensor(operand.get().getType()) ||
          typed.readsOperandAsIs(operand.getOperandNumber()))
        continue;
      castOperand(op, operand, withElementType(operand.get().getType(), compute));
    }
    for (OpResult result : op->getResults())
      if (isFloatTensor(result.getType()))
        result.setType(withElementType(
            result.getType(), typed.keepsF32Result(result.getResultNumber()) ? f32 : compute));
  }

private:
  /// Makes `operand` of `user` have `type`, through a cast shared by all readers of the
  /// same value at the same type, created before the first of them.
  void castOperand(Operation *user, OpOperand &operand, Type type) {
    Value value = operand.get();
    if (value.getType() == type)
      return;
    Value &cast = casts[{value, type}];
    if (!cast) {
      OpBuilder builder(user);
      cast = builder.create<CastOp>(value.getLoc(), type, value);
    }
    operand.set(cast);
  }

  Type storage;
  Type f32;
  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
};

struct MixedPrecisionPass : bertc::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using MixedPrecisionBase::MixedPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module->hasAttr("bert.precision")) {
      module.emitError() << "module already has a precision (" << module->getAttr("bert.precision")
                         << ")";
      return signalPassFailure();
    }
    if (precision != "fp32" && precision != "bf16" && precision != "fp16") {
      module.emitError() << "unknown precision '" << precision << "' (expected fp32, bf16 or fp16)";
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(module);
    if (failed(microStep))
      return signalPassFailure();
    Builder b(module.getContext());
    module->setAttr("bert.precision", b.getStringAttr(precision));
    if (precision == "fp32")
      return;

    Type storage = precision == "bf16" ? Type(b.getBF16Type()) : Type(b.getF16Type());
    // 1. Parameters, in every step function (a quantized one keeps its bytes).
    module.walk([&](ParamOp param) {
      if (!param.getQuantizedAttr())
        param.getResult().setType(param.getResult().getType().clone(storage));
    });
    // 2. The micro-step in program order (the casts it creates are not revisited).
    Retyper retyper(storage);
    SmallVector<Operation *> ops;
    for (Operation &op : microStep->getBody().front())
      ops.push_back(&op);
    for (Operation *op : ops)
      retyper.retype(op);
    // 3. The backward's seed carries the fp16 loss scale.
    if (precision == "fp16")
      microStep->walk([&](FillOp fill) { fill.setLossScaled(true); });
  }
};

} // namespace
