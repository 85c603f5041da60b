//===- PlanBuffers.cpp - one arena, static offsets, buffer reuse ----------===//
//
// Lays out the arena (see Passes.td): fixed regions for parameters, gradients,
// optimizer state, kernel scratch and inputs, then the activations of @micro_step
// packed by liveness, then the CUDA runtime's workspace (target cuda: cuBLASLt's and the
// optimizer's tables), then the host-resident end: with the optimizer offloaded, the
// masters and optimizer state; offloaded checkpoints; embedding tables in host memory; and
// the fp32 masters of frozen 16-bit parameters. Writes
// the offsets back into the IR as attributes.
//
//===----------------------------------------------------------------------===//

#include "bert/Placement.h"
#include "bertc/Analysis/ArenaPacker.h"
#include "bertc/Analysis/KernelWorkspace.h"
#include "bertc/Analysis/StepLiveness.h"
#include "bertc/Transforms/Passes.h"
#include "bertc/abi/adamw_8bit_state.h"
#include "bertc/abi/kernel_workspace.h"

namespace bertc {
#define GEN_PASS_DEF_PLANBUFFERS
#include "bertc/Transforms/Passes.h.inc"
} // namespace bertc

using namespace mlir;
using namespace mlir::bert;

namespace {

/// Appends slots to a contiguous region, each aligned.
struct RegionCursor {
  int64_t begin;
  int64_t end;
  int64_t alignment;

  int64_t take(int64_t bytes) {
    int64_t offset = bertc::alignTo(end, alignment);
    end = offset + bytes;
    return offset;
  }
  /// An empty region starting at the next aligned offset after this one.
  RegionCursor next() const {
    int64_t start = bertc::alignTo(end, alignment);
    return {start, start, alignment};
  }
  ByteRange range() const { return {begin, end - begin}; }
};

struct PlanBuffersPass : bertc::impl::PlanBuffersBase<PlanBuffersPass> {
  using PlanBuffersBase::PlanBuffersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> microStep = bertc::getMicroStep(module);
    FailureOr<bertc::DimBounds> bounds = bertc::getDimBounds(module);
    if (failed(microStep) || failed(bounds))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    Builder b(ctx);

    // 1. Parameters (in their storage type), the fp32 masters of trainable 16-bit ones, fp32
    //    gradients and AdamW moments: contiguous regions in program order. In the
    //    optimizer state the fp32 moments (all m, then all v) come first, then each
    //    8-bit state as one slot: m codes, v codes, then (float-aligned) m's and v's
    //    absmaxes (abi/adamw_8bit_state.h). The gradients of parameters with 8-bit state
    //    come after the others, so the fp32 moments line up with their gradients (the
    //    CUDA AdamW finds all three at one offset from three bases). A parameter updated
    //    in the backward (-bertc-fuse-optimizer) has no gradient slot: its gradient is an
    //    activation that dies at its update. With offload-optimizer the masters and the
    //    optimizer state are laid out last instead (step 6), as are frozen parameters'
    //    masters with host-frozen-masters: no step reads them.
    SmallVector<ParamOp> params;
    microStep->walk([&](ParamOp p) { params.push_back(p); });
    eightBit = bertc::eightBitStateBlocks(module);
    // With host-embeddings, the frozen tables only gathers read lie in host memory (step 6).
    auto inHostMemory = [&](ParamOp p) { return hostEmbeddings && bertc::isHostEmbeddingTable(p); };
    RegionCursor values{0, 0, alignment};
    for (ParamOp p : params)
      if (!inHostMemory(p))
        setParamSlot(p, ParamSlotKind::Value, values.take(bytesOf(p.getResult(), *bounds)));
    llvm::StringSet<> inBackward = bertc::updatesInBackward(module);
    if (offloadOptimizer) {
      if (!inBackward.empty()) {
        module.emitError("the optimizer cannot run both on the host (offload-optimizer) and in "
                         "the backward (-bertc-fuse-optimizer)");
        return signalPassFailure();
      }
      module->setAttr(bertc::kOptimizerOnHost, b.getUnitAttr());
    }
    RegionCursor masters = values.next();
    if (!offloadOptimizer)
      layoutMasters(params, hostFrozenMasters ? Masters::Trainable : Masters::All, masters);
    RegionCursor grads = masters.next();
    for (bool eightBitState : {false, true})
      for (ParamOp p : params)
        if (p.getTrainable() && !inBackward.contains(p.getName()) &&
            eightBit.count(p.getName()) == eightBitState)
          setParamSlot(p, ParamSlotKind::Grad, grads.take(fp32Bytes(p)));
    RegionCursor moments = grads.next();
    if (!offloadOptimizer)
      layoutMoments(params, moments);

    // 2. Kernel scratch and the per-batch inputs. The CUDA kernels' per-op workspace
    //    (KernelWorkspace.h) is one slot every op that needs one shares: ops run one
    //    after another and none keeps it past its own launches.
    //    The CPU's fused attention works in a scratch of its own (larger for grouped-query
    //    heads; [seq, seq] scores, so only the CPU target reserves it); the CUDA kernels,
    //    and the tensor-core kind (head_chunk > 0) on either target, in the kernel workspace.
    if (target != "cpu" && target != "cuda") {
      module.emitError() << "-bertc-plan-buffers: unknown target '" << target
                         << "' (expected cpu or cuda)";
      return signalPassFailure();
    }
    RegionCursor scratch = moments.next();
    if (target == "cpu")
      scratch.take(bertc::cpuAttentionScratchBytes(*microStep, *bounds));
    int64_t kernelWorkspace = 0;
    microStep->walk([&](Operation *op) {
      kernelWorkspace = std::max(kernelWorkspace, bertc::kernelWorkspaceBytes(op, *bounds));
    });
    if (kernelWorkspace > 0) {
      int64_t offset = scratch.take(kernelWorkspace);
      microStep->walk([&](Operation *op) {
        if (bertc::kernelWorkspaceBytes(op, *bounds) > 0)
          setWorkspaceOffset(op, offset);
      });
    }
    RegionCursor inputs = scratch.next();
    microStep->walk([&](InputOp input) {
      setResultOffsets(input, {inputs.take(bytesOf(input.getResult(), *bounds))});
    });

    // 3. Activations: live intervals over the program order, in-place chains as one
    //    buffer, then packing.
    int64_t activationsBegin = inputs.next().begin;
    Block &body = microStep->getBody().front();
    std::vector<bertc::StepBuffer> buffers =
        bertc::coalesceInPlace(bertc::activationLifetimes(body, *bounds));
    std::vector<bertc::LiveInterval> intervals = bertc::intervalsOf(buffers);
    bertc::ArenaPacking packing = bertc::packIntervals(intervals, alignment);
    llvm::DenseMap<Value, int64_t> offsets;
    for (auto [buffer, offset] : llvm::zip(buffers, packing.offsets))
      for (Value value : buffer.values)
        offsets[value] = activationsBegin + offset;
    for (Operation &op : body) {
      if (isa<ParamOp, InputOp, OffloadOp>(op) || op.getNumResults() == 0)
        continue;
      SmallVector<int64_t> resultOffsets;
      for (Value result : op.getResults())
        resultOffsets.push_back(offsets[result]);
      setResultOffsets(&op, resultOffsets);
    }
    Value loss = body.getTerminator()->getOperand(0);

    // 5. The CUDA runtime's workspace last, so that every other offset is the same with
    //    and without it: the GEMM library's, then the optimizer's tables.
    int64_t gemmBegin = bertc::alignTo(activationsBegin + packing.bytes, alignment);
    RegionCursor gemm{gemmBegin, gemmBegin, alignment};
    if (gemmWorkspace > 0) {
      gemm.take(gemmWorkspace);
      gemm.take(bertc::cudaOptimizerTablesBytes(*microStep));
    }
    int64_t deviceBytes = bertc::alignTo(gemm.end, alignment);
    int64_t fixedBytes = activationsBegin + (gemm.end - gemm.begin);
    // 6. Host memory, after the device arena: offloaded, the masters and the optimizer
    //    state; the host copies of offloaded checkpoints, one slot each (all of them live
    //    where the forward turns into the backward); with host-embeddings, the tables the
    //    device's gathers read in place; then, with host-frozen-masters, the frozen
    //    parameters' masters, which only initialisation and checkpoints read (the steps
    //    read their 16-bit working copies).
    RegionCursor hostActivations{deviceBytes, deviceBytes, alignment};
    if (offloadOptimizer) {
      masters = hostActivations;
      layoutMasters(params, hostFrozenMasters ? Masters::Trainable : Masters::All, masters);
      moments = masters.next();
      layoutMoments(params, moments);
      hostActivations = moments.next();
    }
    for (OffloadOp offload : body.getOps<OffloadOp>())
      setResultOffsets(offload, {hostActivations.take(bytesOf(offload.getResult(), *bounds))});
    RegionCursor hostParameters = hostActivations.next();
    for (ParamOp p : params)
      if (inHostMemory(p))
        setParamSlot(p, ParamSlotKind::Value, hostParameters.take(bytesOf(p.getResult(), *bounds)));
    RegionCursor frozenMasters = hostParameters.next();
    if (hostFrozenMasters)
      layoutMasters(params, Masters::Frozen, frozenMasters);
    // 7. The optimizer's parameter reads share the micro-step's slots.
    if (auto optimizerStep = module.lookupSymbol<func::FuncOp>(bertc::kOptimizerStep)) {
      llvm::StringMap<ParamOp> byName;
      for (ParamOp p : params)
        byName[p.getName()] = p;
      optimizerStep.walk([&](ParamOp p) {
        if (ParamOp original = byName.lookup(p.getName()))
          copyParamSlots(p, original);
      });
    }

    int64_t arenaBytes = std::max({deviceBytes, bertc::alignTo(moments.end, alignment),
                                   bertc::alignTo(hostActivations.end, alignment),
                                   bertc::alignTo(hostParameters.end, alignment),
                                   bertc::alignTo(frozenMasters.end, alignment)});
    ByteRange frozen = frozenMasters.range();
    ByteRange offloaded = hostActivations.range();
    ByteRange hostTables = hostParameters.range();
    module->setAttr("bert.plan",
                    PlanAttr::get(ctx, arenaBytes, values.range(), masters.range(), grads.range(),
                                  moments.range(), scratch.range(), inputs.range(),
                                  ByteRange{activationsBegin, packing.bytes}, gemm.range(),
                                  fixedBytes + bertc::maxLiveBytes(intervals), offsets[loss],
                                  arenaBytes - deviceBytes, frozen.bytes > 0 ? frozen : ByteRange{},
                                  offloaded.bytes > 0 ? offloaded : ByteRange{},
                                  hostTables.bytes > 0 ? hostTables : ByteRange{}));
  }

  enum class Masters { All, Trainable, Frozen };
  /// The fp32 masters of the parameters `which` takes that keep one, in program order.
  void layoutMasters(ArrayRef<ParamOp> params, Masters which, RegionCursor &masters) {
    for (ParamOp p : params) {
      bool taken = which == Masters::All || p.getTrainable() == (which == Masters::Trainable);
      if (bertc::keepsFp32Master(p) && taken)
        setParamSlot(p, ParamSlotKind::Master, masters.take(fp32Bytes(p)));
    }
  }

  /// The optimizer state: the fp32 moments (all m, then all v), then each 8-bit state as
  /// one slot: m codes, v codes, then (float-aligned) m's and v's absmaxes
  /// (abi/adamw_8bit_state.h).
  void layoutMoments(ArrayRef<ParamOp> params, RegionCursor &moments) {
    for (ParamSlotKind moment : {ParamSlotKind::AdamM, ParamSlotKind::AdamV})
      for (ParamOp p : params)
        if (p.getTrainable() && !eightBit.count(p.getName()))
          setParamSlot(p, moment, moments.take(fp32Bytes(p)));
    for (ParamOp p : params) {
      if (!p.getTrainable() || !eightBit.count(p.getName()))
        continue;
      int64_t count = p.getResult().getType().getNumElements();
      auto block = bertc::QuantBlockSize(eightBit.lookup(p.getName()));
      int64_t codesBytes = bertc::alignTo(2 * count, int64_t(sizeof(float)));
      int64_t absmaxBytes = bertc::quantBlockCount(count, block) * int64_t(sizeof(float));
      int64_t offset = moments.take(codesBytes + 2 * absmaxBytes);
      setParamSlot(p, ParamSlotKind::AdamM, offset);
      setParamSlot(p, ParamSlotKind::AdamV, offset + count);
      setParamSlot(p, ParamSlotKind::AdamMAbsmax, offset + codesBytes);
      setParamSlot(p, ParamSlotKind::AdamVAbsmax, offset + codesBytes + absmaxBytes);
    }
  }

  /// The 8-bit state blocks of the module being planned, by parameter name.
  llvm::StringMap<int64_t> eightBit;

  /// An fp32 copy of a parameter: its master weight, gradient or an AdamW moment.
  static int64_t fp32Bytes(ParamOp param) {
    return param.getResult().getType().getNumElements() * 4;
  }

  static int64_t bytesOf(Value value, bertc::DimBounds bounds) {
    return bertc::boundedBytes(cast<RankedTensorType>(value.getType()), bounds);
  }
};

} // namespace
