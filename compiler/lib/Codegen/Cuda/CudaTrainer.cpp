//===- CudaTrainer.cpp - CUDA source of a trainer's step -------------------===//
//
// The CUDA target of the trainer emitter (TrainerEmitter.h): trainer.cu launches the
// runtime's CUDA kernels and cuBLASLt GEMMs on the device arena, on one stream. Beyond
// what every target writes:
// - kAdamWParameters: each trainable parameter with fp32 moments, its fp32 values (its
//   master for a 16-bit one) and its gradient/moment position (AdamWBases), from which the
//   runtime builds the device chunk table once (cuda::adamwChunks);
// - optimizerStep: AdamW as one launch over every chunk, which also rewrites the 16-bit
//   working copies from their masters; the parameters with 8-bit state are not in the
//   table and are updated as one group (cuda::adamw8bitUpdate over a table of them, a
//   launch per few dozen), their working copies rewritten in the same launches. When
//   every update runs in the backward (-bertc-fuse-optimizer), microStep updates each
//   parameter on its own, in a launch that rewrites its working copy too, and there is
//   neither a table nor anything for optimizerStep to do;
// - with the optimizer offloaded (bert.optimizer_on_host), neither: hostUpdate(ctx, k) is
//   the CPU target's AdamW of the k-th parameter of kParams, which the runner runs on the
//   host arena once that gradient is down, and microStep calls cuda::streamGradient(dev, k)
//   right after the op that completes it;
// - evalStep copies its fp32 logits to the host;
// - CudaSteps also say where the cuBLASLt workspace and the optimizer's tables lie, and what
//   in the steps needs a GPU newer than sm_75 (GEMMs in bf16 or TF32).
//
//===----------------------------------------------------------------------===//

#include "bertc/Codegen/CudaTrainer.h"

#include "../TrainerEmitter.h"
#include "../TrainerPlanTable.h"
#include "CudaEmitters.h"
#include "bert/BertDialect.h"
#include "bertc/Analysis/KernelWorkspace.h"
#include "bertc/Analysis/TrainModule.h"

#include "llvm/ADT/TypeSwitch.h"

#include <optional>

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The arena offset of `param`'s `kind` slot (the callers check that it is there).
int64_t slot(ParamOp param, bert::ParamSlotKind kind) { return *bert::getParamSlot(param, kind); }

/// Where the AdamW launch's gradient and moment arrays start: the slots of the first
/// trainable parameter. -bertc-plan-buffers lays gradients, first and second moments out
/// in the same order with the same sizes, so one offset from these bases finds all three.
struct AdamWBases {
  int64_t grad, m, v;
};

/// The NewerGpuMath (bertc/abi/trainer.h) of `module`'s steps: Bf16 where its tensors are
/// bf16, which its GEMMs then take, else Tf32 where an op is marked `tf32`, else None.
StringRef newerGpuMath(ModuleOp module) {
  bool bf16 = false, tf32 = false;
  module.walk([&](Operation *op) {
    tf32 |= op->hasAttr("tf32");
    bf16 |= llvm::any_of(op->getResultTypes(), [](Type type) {
      auto shaped = dyn_cast<ShapedType>(type);
      return shaped && shaped.getElementType().isBF16();
    });
  });
  return bf16 ? "NewerGpuMath::Bf16" : tf32 ? "NewerGpuMath::Tf32" : "NewerGpuMath::None";
}

AdamWBases adamwBases(AdamWOp first) {
  auto param = first.getParam().getDefiningOp<ParamOp>();
  return {slot(param, bert::ParamSlotKind::Grad), slot(param, bert::ParamSlotKind::AdamM),
          slot(param, bert::ParamSlotKind::AdamV)};
}

/// The updates of @optimizer_step that keep fp32 moments: the chunk table's, in order.
SmallVector<AdamWOp> chunkedUpdates(func::FuncOp optimizerStep) {
  SmallVector<AdamWOp> updates;
  optimizerStep.walk([&](AdamWOp adamw) {
    if (!adamw.getStateBlock())
      updates.push_back(adamw);
  });
  return updates;
}

/// Whether @optimizer_step has no update: every one runs in the backward.
bool updatesInBackwardOnly(func::FuncOp optimizerStep) {
  return !optimizerStep.walk([](AdamWOp) { return WalkResult::interrupt(); }).wasInterrupted();
}

/// kAdamWParameters: the parameters with fp32 moments, in @optimizer_step's order; offsets
/// count fp32 values from the arena (parameters) and from the bases (gradients and moments).
/// (-bertc-plan-buffers puts the gradients of parameters with 8-bit state after these, so
/// their gradients and moments line up.) Returns how many there are.
FailureOr<int64_t> emitAdamWTable(func::FuncOp optimizerStep, raw_ostream &os) {
  if (updatesInBackwardOnly(optimizerStep))
    return 0;
  SmallVector<AdamWOp> updates = chunkedUpdates(optimizerStep);
  if (updates.empty())
    return optimizerStep.emitError("the cuda target's AdamW needs a parameter with fp32 moments");
  std::optional<AdamWBases> bases;
  os << "const cuda::AdamWParameter kAdamWParameters[] = {\n";
  for (AdamWOp adamw : updates) {
    auto param = adamw.getParam().getDefiningOp<ParamOp>();
    bool sixteenBit = param && !param.getResult().getType().getElementType().isF32();
    if (!param || !bert::hasParamSlot(param, bert::ParamSlotKind::Grad) ||
        (sixteenBit && !bert::hasParamSlot(param, bert::ParamSlotKind::Master)))
      return adamw.emitError("parameter has no optimizer slots: run -bertc-plan-buffers");
    if (!bases)
      bases = adamwBases(adamw);
    int64_t state = slot(param, bert::ParamSlotKind::Grad) - bases->grad;
    if (slot(param, bert::ParamSlotKind::AdamM) - bases->m != state ||
        slot(param, bert::ParamSlotKind::AdamV) - bases->v != state)
      return adamw.emitError("the gradient and moment slots are not laid out alike, as the "
                             "cuda target's AdamW needs");
    int64_t values =
        slot(param, sixteenBit ? bert::ParamSlotKind::Master : bert::ParamSlotKind::Value);
    os << "    {" << values / 4 << ", " << state / 4 << ", "
       << param.getResult().getType().getNumElements() << ", "
       << (adamw.getWeightDecay().convertToDouble() != 0.0 ? "true" : "false") << "}, // "
       << param.getName() << "\n";
  }
  os << "};\n\n";
  return int64_t(updates.size());
}

/// optimizerStep: AdamW over every chunk and their 16-bit working copies; then the
/// parameters with 8-bit state, updated (and their working copies rewritten) as one group.
/// With the optimizer on the host: the device's optimizerStep does nothing, and
/// hostUpdate(ctx, k) runs the CPU kernels' AdamW of kParams[k] on the host arena.
LogicalResult emitHostUpdate(func::FuncOp optimizerStep, const llvm::StringMap<size_t> &indices,
                             raw_ostream &os) {
  os << "// AdamW runs on the host: hostUpdate.\n"
     << "void optimizerStep(const StepContext &, const cuda::StepDevice &) {}\n\n"
     << "void hostUpdate(const StepContext &ctx, size_t param) {\n"
     << "  [[maybe_unused]] std::byte *arena = ctx.arena;\n"
     << "  switch (param) {\n";
  EmitContext ctx(os, KernelTarget::Cpu);
  WalkResult walked = optimizerStep.walk([&](AdamWOp adamw) {
    auto param = adamw.getParam().getDefiningOp<ParamOp>();
    if (!param || !indices.count(param.getName())) {
      adamw.emitError("the host's AdamW updates a parameter that @micro_step does not have");
      return WalkResult::interrupt();
    }
    os << "  case " << indices.lookup(param.getName()) << ": {\n";
    if (failed(ctx.declareResults(param)) ||
        failed(emitLossOptimizerOp(adamw, ctx).value_or(failure())))
      return WalkResult::interrupt();
    os << "    return;\n  }\n";
    return WalkResult::advance();
  });
  os << "  }\n}\n\n";
  return failure(walked.wasInterrupted());
}

/// The parameters whose gradient slots `op` adds to (a LayerNorm's gradient: two).
SmallVector<Value, 2> accumulatedParams(Operation *op) {
  return llvm::TypeSwitch<Operation *, SmallVector<Value, 2>>(op)
      .Case<AccumulateGradOp, AccumulateLinearGradWeightOp, AccumulateBiasGradOp,
            AccumulateEmbeddingGradOp, GeluGradAccumulateBiasOp, DropoutGradAccumulateBiasOp,
            AccumulateLmHeadLossGradOp>(
          [](auto accumulate) { return SmallVector<Value, 2>{accumulate.getParam()}; })
      .Case([](AccumulateLayerNormGradOp grad) {
        return SmallVector<Value, 2>{grad.getGamma(), grad.getBeta()};
      })
      .Default([](Operation *) { return SmallVector<Value, 2>(); });
}

/// The ops after which microStep streams gradients: for each trainable parameter, the
/// last op of @micro_step that adds to its gradient slot, with the parameter's index.
llvm::DenseMap<Operation *, SmallVector<size_t, 2>> gradientCompletions(func::FuncOp microStep) {
  llvm::StringMap<size_t> indices = paramTableIndices(microStep);
  llvm::StringMap<Operation *> last;
  microStep.walk([&](Operation *op) {
    for (Value param : accumulatedParams(op))
      if (auto paramOp = param.getDefiningOp<ParamOp>())
        last[paramOp.getName()] = op;
  });
  llvm::DenseMap<Operation *, SmallVector<size_t, 2>> completions;
  for (const auto &entry : last)
    completions[entry.getValue()].push_back(indices.lookup(entry.getKey()));
  for (auto &entry : completions) // StringMap's order is not the table's
    llvm::sort(entry.second);
  return completions;
}

/// The updates with 8-bit state as one cuda::adamw8bitUpdate over a table of them
/// (cuda::AdamW8bitParameter): each one's fp32 values (a 16-bit parameter's master),
/// gradient slot, state, working copy (none for an fp32 parameter), count and decay flag.
LogicalResult emitEightBitGroup(ArrayRef<AdamWOp> updates, AdamWOp first, double decay,
                                raw_ostream &os) {
  if (updates.empty())
    return success();
  AdamWOp front = updates.front();
  auto block = *front.getStateBlock();
  Type workingType;
  for (AdamWOp adamw : updates) {
    Type element = adamw.getParam().getType().getElementType();
    if (!element.isF32() && workingType && element != workingType)
      return adamw.emitError("the cuda target's working copies are all of one 16-bit type");
    workingType = element.isF32() ? workingType : element;
  }
  std::string type = workingType && workingType.isF16() ? "fp16" : "bf16";
  os << "  const cuda::AdamW8bitParameter<" << type << "> eightBit[] = {\n";
  for (AdamWOp adamw : updates) {
    if (*adamw.getStateBlock() != block)
      return adamw.emitError("the cuda target's 8-bit AdamW takes one block size for every "
                             "parameter");
    if (failed(checkAdamWSlots(adamw)))
      return failure();
    auto param = adamw.getParam().getDefiningOp<ParamOp>();
    bool sixteenBit = !param.getType().getElementType().isF32();
    os << "      {" << adamwValues(param, EmitContext::paramSlot(param, bert::ParamSlotKind::Value))
       << ", " << EmitContext::paramSlot(param, bert::ParamSlotKind::Grad) << ", "
       << eightBitStateArgument(param) << ", "
       << (sixteenBit ? EmitContext::paramSlot(param, bert::ParamSlotKind::Value, type) : "nullptr")
       << ", " << EmitContext::numel(param) << ", "
       << (adamw.getWeightDecay().convertToDouble() != 0.0 ? "true" : "false") << "}, // "
       << param.getName() << "\n";
  }
  os << "  };\n"
     << "  cuda::adamw8bitUpdate(eightBit, " << updates.size() << ", QuantBlockSize(" << block
     << "), " << adamwConfigArgument(first, decay) << ", dev.stream);\n";
  return success();
}

LogicalResult emitChunkedOptimizerStep(func::FuncOp optimizerStep, raw_ostream &os) {
  if (updatesInBackwardOnly(optimizerStep)) {
    os << "// Every AdamW update runs in microStep's backward.\n"
       << "void optimizerStep(const StepContext &, const cuda::StepDevice &) {}\n\n";
    return success();
  }
  SmallVector<AdamWOp> updates;
  optimizerStep.walk([&](AdamWOp adamw) { updates.push_back(adamw); });
  SmallVector<AdamWOp> chunked = chunkedUpdates(optimizerStep);
  if (chunked.empty())
    return optimizerStep.emitError("the cuda target's AdamW needs a parameter with fp32 moments");
  AdamWOp first = chunked.front();
  double decay = 0.0;
  for (AdamWOp adamw : updates) {
    if (adamw.getBeta1() != first.getBeta1() || adamw.getBeta2() != first.getBeta2() ||
        adamw.getEpsilon() != first.getEpsilon())
      return adamw.emitError("the cuda target's AdamW takes one beta1, beta2 and epsilon for "
                             "every parameter");
    double wd = adamw.getWeightDecay().convertToDouble();
    if (wd != 0.0 && decay != 0.0 && wd != decay)
      return adamw.emitError("the cuda target's AdamW takes one weight decay for every "
                             "parameter that decays");
    decay = wd != 0.0 ? wd : decay;
  }
  // The 16-bit working copies, all of one type, are rewritten in the update's pass.
  Type workingType;
  for (AdamWOp adamw : chunked) {
    Type element = adamw.getParam().getType().getElementType();
    if (element.isF32())
      continue;
    if (workingType && element != workingType)
      return adamw.emitError("the cuda target's working copies are all of one 16-bit type");
    workingType = element;
  }
  AdamWBases bases = adamwBases(first);
  os << "void optimizerStep(const StepContext &ctx, const cuda::StepDevice &dev) {\n"
     << "  std::byte *arena = ctx.arena;\n"
     << "  cuda::adamwUpdate(reinterpret_cast<float *>(arena), "
     << "reinterpret_cast<const float *>(arena + " << bases.grad << "), "
     << "reinterpret_cast<float *>(arena + " << bases.m << "), "
     << "reinterpret_cast<float *>(arena + " << bases.v << "), ";
  if (workingType)
    os << "reinterpret_cast<" << (workingType.isBF16() ? "bf16" : "fp16") << " *>(arena), ";
  os << "dev.adamwChunks, dev.adamwChunkCount, " << adamwConfigArgument(first, decay)
     << ", dev.stream);\n";
  SmallVector<AdamWOp> eightBit;
  for (AdamWOp adamw : updates)
    if (adamw.getStateBlock())
      eightBit.push_back(adamw);
  if (failed(emitEightBitGroup(eightBit, first, decay, os)))
    return failure();
  os << "}\n\n";
  return success();
}

class CudaTrainerTarget final : public TrainerTarget {
public:
  KernelTarget kernels() const override { return KernelTarget::Cuda; }

  ArrayRef<OpEmitter> opEmitters() const override {
    static const OpEmitter emitters[] = {emitGemmOp,    emitCudaAttentionOp, emitPointwiseOp,
                                         emitDecoderOp, emitHeadShapeOp,     emitLossOptimizerOp};
    return emitters;
  }

  StringRef stepParameters() const override {
    return "const StepContext &ctx, const cuda::StepDevice &dev";
  }

  LogicalResult emitPreamble(ModuleOp module, bool, raw_ostream &os) override {
    FailureOr<func::FuncOp> microStep = getMicroStep(module);
    if (failed(microStep))
      return failure();
    FailureOr<PlanAttr> plan = getPlan(module);
    if (failed(plan))
      return failure();
    gemmWorkspace = plan->getGemmWorkspace();
    hostOptimizer = optimizerOnHost(module);
    if (hostOptimizer) {
      indices = paramTableIndices(*microStep);
      gradientCompletion = gradientCompletions(*microStep);
    }
    int64_t tablesBytes = cudaOptimizerTablesBytes(*microStep);
    if (gemmWorkspace.bytes < kCudaGemmWorkspaceBytes + tablesBytes)
      return module.emitError() << "the plan has no cuBLASLt workspace of "
                                << kCudaGemmWorkspaceBytes << " bytes and optimizer tables of "
                                << tablesBytes << ": plan for target cuda";
    os << "// Generated by bertc: a CUDA trainer. Every pointer below is a slot of the one\n"
       << "// device arena the runtime allocates; offsets come from the memory plan.\n"
       << "#include \"bertc/abi/trainer.h\"\n"
       << "#include \"bertc/runtime/cuda_check.h\"\n"
       << "#include \"bertc/runtime/cuda_chunked_attention.h\"\n"
       << "#include \"bertc/runtime/cuda_gemm.h\"\n"
       << "#include \"bertc/runtime/cuda_kernels.h\"\n"
       << "#include \"bertc/runtime/cuda_step.h\"\n"
       << (hostOptimizer ? "#include \"bertc/runtime/cpu_kernels.h\"\n\n" : "\n")
       << "using namespace bertc;\n\n"
       << "static_assert(cuda::kCudaWorkspaceBytes == " << kCudaGemmWorkspaceBytes
       << ", \"the plan's CUDA workspace differs from the runtime's\");\n\n";
    return success();
  }

  LogicalResult emitTables(ModuleOp module, raw_ostream &os) override {
    FailureOr<func::FuncOp> optimizerStep = getOptimizerStep(module);
    if (failed(optimizerStep))
      return failure();
    // The host's AdamW needs no chunk table.
    FailureOr<int64_t> count = hostOptimizer ? 0 : emitAdamWTable(*optimizerStep, os);
    if (failed(count))
      return failure();
    adamwParameterCount = *count;
    return success();
  }

  LogicalResult emitOptimizerStep(func::FuncOp optimizerStep, raw_ostream &os) override {
    if (hostOptimizer)
      return emitHostUpdate(optimizerStep, indices, os);
    return emitChunkedOptimizerStep(optimizerStep, os);
  }

  void emitAfterOp(Operation *op, const EmitContext &ctx) const override {
    if (auto completion = gradientCompletion.find(op); completion != gradientCompletion.end())
      for (size_t index : completion->second)
        ctx.os << "  cuda::streamGradient(dev, " << index << ");\n";
  }

  LogicalResult emitLogitsCopy(Value logits, const EmitContext &ctx) override {
    if (!cast<ShapedType>(logits.getType()).getElementType().isF32())
      return logits.getParentRegion()->getParentOp()->emitError(
          "the cuda target's eval step needs fp32 logits");
    ctx.os << "  BERTC_CUDA_CHECK(cudaMemcpyAsync(logits, " << ctx.name(logits) << ", "
           << EmitContext::bytes(logits) << ", cudaMemcpyDeviceToHost, dev.stream));\n"
           << "  BERTC_CUDA_CHECK(cudaStreamSynchronize(dev.stream));\n";
    return success();
  }

  /// The cuBLASLt workspace, then the optimizer's tables: the arena's last bytes.
  void emitSteps(ModuleOp module, raw_ostream &os) override {
    os << "const CudaSteps kSteps = {microStep, optimizerStep, evalStep, "
       << (adamwParameterCount ? "kAdamWParameters" : "nullptr") << ", " << adamwParameterCount
       << ",\n"
       << "                          /*gemmWorkspaceOffset=*/" << gemmWorkspace.offset << ",\n"
       << "                          /*optimizerTables=*/{"
       << gemmWorkspace.offset + kCudaGemmWorkspaceBytes << ", "
       << gemmWorkspace.bytes - kCudaGemmWorkspaceBytes << "},\n"
       << "                          /*hostUpdate=*/" << (hostOptimizer ? "hostUpdate" : "nullptr")
       << ",\n"
       << "                          /*newerGpuMath=*/" << newerGpuMath(module) << "};\n";
  }

private:
  /// The plan's cuBLASLt workspace and optimizer tables, read by emitPreamble.
  ByteRange gemmWorkspace{};
  /// Entries of kAdamWParameters, counted by emitTables.
  int64_t adamwParameterCount = 0;
  /// Whether AdamW runs on the host (hostUpdate), read by emitPreamble; then kParams'
  /// indices by name, and where microStep streams each gradient.
  bool hostOptimizer = false;
  llvm::StringMap<size_t> indices;
  llvm::DenseMap<Operation *, SmallVector<size_t, 2>> gradientCompletion;
};

} // namespace

LogicalResult emitCudaTrainer(ModuleOp module, const JobDataSettings &data, raw_ostream &os) {
  CudaTrainerTarget target;
  return emitTrainer(module, data, target, os);
}

} // namespace bertc
