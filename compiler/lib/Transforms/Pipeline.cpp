//===- Pipeline.cpp - bertc's pass pipeline -------------------------------===//

#include "bertc/Transforms/Pipeline.h"

#include "bertc/Analysis/DeviceModel.h"
#include "bertc/Analysis/TrainModule.h"
#include "bertc/Transforms/Passes.h"

namespace bertc {

void addPlanningPasses(mlir::OpPassManager &pm, const PlanningOptions &options) {
  // A recomputation may have given a dequantized weight a second reader.
  pm.addPass(createDequantizeAtUse());
  // Before planning: the order decides how long tensors live, and so the peak.
  pm.addPass(createScheduleForMemory());
  // In that order, each update right after its parameter's last reader: the planner
  // then sees each gradient die at its update.
  if (options.fuseOptimizer)
    pm.addPass(createFuseOptimizer());
  // Whatever is still accumulated: each linear weight's gradient by its own GEMM.
  pm.addPass(createAccumulateInGemm());
  pm.addPass(createFuseAddLayerNorm());
  // Last: every tensor the step will ever touch is known only now.
  PlanBuffersOptions planning;
  planning.gemmWorkspace = options.gemmWorkspaceBytes;
  planning.offloadOptimizer = options.offloadOptimizer;
  planning.hostFrozenMasters = options.hostFrozenMasters;
  planning.target = options.target;
  planning.hostEmbeddings = options.hostEmbeddings;
  pm.addPass(createPlanBuffers(planning));
}

std::string trainerTarget(int64_t gemmWorkspaceBytes) {
  return gemmWorkspaceBytes > 0 ? "cuda" : "cpu";
}

void buildPipeline(mlir::OpPassManager &pm, Stage from, Stage to, const PipelineOptions &options) {
  if (from < Stage::Train && to >= Stage::Train) {
    // The whole micro-step: the backward pass is derived, never written by hand.
    pm.addPass(createAutodiff());
    // A quantized weight's backward GEMMs dequantize it anew: none lives across the step.
    pm.addPass(createDequantizeAtUse());
    // The update after the (accumulated) micro-steps: AdamW per trainable parameter,
    // each with the state it keeps, which the plan sizes.
    InsertOptimizerOptions optimizer;
    optimizer.optimizerState = options.optimizerState;
    pm.addPass(createInsertOptimizer(optimizer));
  }
  if (from < Stage::Mixed && to >= Stage::Mixed) {
    // After the optimizer (its parameters get master weights), before anything that
    // counts bytes: storage types decide every size the plan adds up.
    MixedPrecisionOptions mixed;
    mixed.precision = options.precision;
    pm.addPass(createMixedPrecision(mixed));
  }
  if (from < Stage::BuffersPlanned && to >= Stage::BuffersPlanned) {
    // Before anything prices the step: the kernels it is priced for, the CUDA trainer's
    // whenever there is a GPU to price them on.
    LowerToTargetOptions lowering;
    bool gpu = deviceModel(options.arch).target == mlir::bert::CostTarget::Cuda;
    lowering.target = gpu ? "cuda" : "cpu";
    lowering.tf32 = options.tf32;
    lowering.attentionHeadChunk = options.attentionHeadChunk;
    lowering.lmHeadTokenChunk = options.lmHeadTokenChunk;
    pm.addPass(createLowerToTarget(lowering));
    if (options.rematArenaBudget > 0) {
      // After storage types are final (they size every tensor), before the schedule:
      // it places each recomputation next to its readers.
      RematerializeOptions remat;
      remat.arenaBudget = options.rematArenaBudget;
      remat.arch = options.arch;
      remat.gemmWorkspace = options.gemmWorkspaceBytes;
      remat.fuseOptimizer = options.fuseOptimizer;
      remat.offloadOptimizer = options.offloadOptimizer;
      remat.hostFrozenMasters = gpu;
      remat.hostEmbeddings = options.hostEmbeddings;
      remat.offloadCheckpoints = options.offloadCheckpoints;
      remat.hostBudget = options.offloadCheckpoints ? options.hostRamBudget : 0;
      pm.addPass(createRematerialize(remat));
    }
    // On a GPU, frozen parameters' fp32 masters wait in host memory for the checkpoint.
    addPlanningPasses(pm,
                      {options.fuseOptimizer, options.gemmWorkspaceBytes, options.offloadOptimizer,
                       /*hostFrozenMasters=*/gpu, trainerTarget(options.gemmWorkspaceBytes),
                       options.hostEmbeddings});
  }
  if (to >= Stage::Planned) {
    // An independent second check of the plan (budget 0: the driver checks the whole process).
    pm.addPass(createVerifyBudget());
  }
  if (from < Stage::Planned && to >= Stage::Planned) {
    // After planning: evaluation runs a subset of the planned step at its offsets.
    pm.addPass(createDeriveEvalStep());
  }
}

Stage stageOf(mlir::ModuleOp module) {
  if (module->hasAttr("bert.plan"))
    return module.lookupSymbol(kEvalStep) ? Stage::Planned : Stage::BuffersPlanned;
  if (module->hasAttr("bert.precision"))
    return Stage::Mixed;
  if (module.lookupSymbol(kOptimizerStep))
    return Stage::Train;
  return Stage::Forward;
}

} // namespace bertc
