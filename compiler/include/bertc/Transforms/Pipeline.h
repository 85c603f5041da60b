//===- Pipeline.h - bertc's pass pipeline ------------------------*- C++ -*-===//
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

namespace bertc {

/// The stages a module goes through; each `-emit` level stops after one. A module whose
/// buffers are planned but that has no @eval_step yet (planned by bertc-opt) is at
/// BuffersPlanned; Planned is what the code generators take.
enum class Stage { Forward, Train, Mixed, BuffersPlanned, Planned };

/// The choices the fit driver (or the command line) makes for one plan.
struct PipelineOptions {
  /// Storage precision of activations and GEMM operands: "fp32", "bf16" or "fp16".
  std::string precision = "fp32";
  /// The arena the rematerializer must meet by recomputing activations in the backward
  /// pass; 0 keeps every activation.
  int64_t rematArenaBudget = 0;
  /// Bytes of the GEMM library's workspace the arena ends with: the cuBLASLt workspace
  /// for target cuda (kCudaGemmWorkspaceBytes), 0 for the CPU.
  int64_t gemmWorkspaceBytes = 0;
  /// The GPU generation (`--arch`) whose speeds price the choices; empty for the CPU.
  std::string arch;
  /// The AdamW moments of parameters of at least 4096 values: "fp32" or "8bit"
  /// (-bertc-insert-optimizer's optimizer-state).
  std::string optimizerState = "fp32";
  /// Each AdamW update in the backward, as soon as its gradient is complete
  /// (-bertc-fuse-optimizer): no gradient region. One micro-step per optimizer step, no
  /// clipping and no fp16 only.
  bool fuseOptimizer = false;
  /// The master weights and optimizer state in host memory, where AdamW runs after the
  /// backward (ZeRO-Offload; -bertc-plan-buffers's offload-optimizer): the device keeps
  /// the parameters and gradients only. Not with fuseOptimizer.
  bool offloadOptimizer = false;
  /// Run the fp32 GEMMs with TF32 tensor cores (`--tf32`; -bertc-lower-to-target's tf32,
  /// for a GPU of sm_80 or newer). No effect on 16-bit GEMMs.
  bool tf32 = false;
  /// Heads the attention's GEMMs take at a time (-bertc-lower-to-target's
  /// attention-head-chunk): 0, the fused kernels without [seq, seq] matrices.
  int64_t attentionHeadChunk = 0;
  /// Tokens the LM head loss takes at a time (-bertc-lower-to-target's
  /// lm-head-token-chunk): 0, the largest power of two whose logits block fits its bound.
  int64_t lmHeadTokenChunk = 0;
  /// What the backward reads of the forward waits in host memory where copying it is
  /// cheaper than recomputing it (-bertc-rematerialize's offload-checkpoints); only with a
  /// rematArenaBudget.
  bool offloadCheckpoints = false;
  /// The frozen embedding tables only gathers read in host memory, where the device's
  /// gathers read the batch's rows (-bertc-plan-buffers's host-embeddings).
  bool hostEmbeddings = false;
  /// Host memory what is offloaded may take, the optimizer's included (--host-ram;
  /// -bertc-rematerialize's host-budget); 0, no bound.
  int64_t hostRamBudget = 0;
};

/// What the passes after recomputation need to plan a step's memory.
struct PlanningOptions {
  bool fuseOptimizer = false;     ///< -bertc-fuse-optimizer: updates in the backward
  int64_t gemmWorkspaceBytes = 0; ///< -bertc-plan-buffers's gemm-workspace
  bool offloadOptimizer = false;  ///< -bertc-plan-buffers's offload-optimizer
  bool hostFrozenMasters = false; ///< -bertc-plan-buffers's host-frozen-masters (a GPU plan)
  std::string target = "cpu";     ///< -bertc-plan-buffers's target: whose kernel scratch
  bool hostEmbeddings = false;    ///< -bertc-plan-buffers's host-embeddings
};

/// The trainer that runs a plan whose arena ends with `gemmWorkspaceBytes` of GEMM library
/// workspace (PipelineOptions::gemmWorkspaceBytes): "cuda" (cuBLASLt's), else "cpu". Its
/// kernels, not the ones the plan is priced for (a cpu plan may be lowered for a GPU's),
/// decide the scratch the plan holds (-bertc-plan-buffers's target).
std::string trainerTarget(int64_t gemmWorkspaceBytes);

/// Adds the tail of the pipeline, from a step whose recomputation is decided to its memory
/// plan: the schedule, the updates in the backward, the gradient and LayerNorm fusions, the
/// buffer plan. The pipeline and -bertc-rematerialize's trial plans run these same passes.
void addPlanningPasses(mlir::OpPassManager &pm, const PlanningOptions &options);

/// Adds the passes that take a module from `from` to `to` (from <= to). A plan is always
/// checked by -bertc-verify-budget, also one read back (from == to == Planned).
void buildPipeline(mlir::OpPassManager &pm, Stage from, Stage to,
                   const PipelineOptions &options = {});

/// The stage a module has reached, read from its contents.
Stage stageOf(mlir::ModuleOp module);

} // namespace bertc
