//===- PlanReport.h - what a plan costs, for machines and people -*- C++ -*-===//
#pragma once

#include "bertc/Analysis/StepCost.h"
#include "bertc/Analysis/StepMemory.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace bertc {

/// An op the backward recomputes (-bertc-rematerialize's `bert.recompute`).
struct RecomputedOp {
  std::string op;     ///< "bert.gelu"
  std::string name;   ///< the tensor it remakes, "bert.encoder.layer.0.intermediate.gelu"
  std::string origin; ///< "model.toml:12:1", or ""
  double flops = 0;   ///< per optimizer step
};

/// The memory of a planned module by category, plus what the process adds. The
/// categories add up to peakBytes(); they are the device's: with the optimizer in host
/// memory its master weights and state are in the host fields.
struct PlanSummary {
  int64_t budgetBytes = 0;
  int64_t reserveBytes = 0;
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0;
  int64_t parameterBytes = 0;
  int64_t masterWeightBytes = 0;
  int64_t gradientBytes = 0;
  int64_t optimizerStateBytes = 0;
  int64_t activationBytes = 0; ///< inputs and the tensors kept for the backward at the peak
  int64_t temporaryBytes = 0;  ///< the rest of the activation space (and alignment)
  int64_t workspaceBytes = 0;  ///< kernel scratch
  int64_t microBatch = 0;
  int64_t accumulationSteps = 0;
  int64_t seqLen = 0;
  std::string precision;
  /// "8bit" when some parameter keeps 8-bit AdamW moments (bert.adamw state_block), else
  /// "fp32".
  std::string optimizerState;
  /// Whether each AdamW update runs in the backward (-bertc-fuse-optimizer): then there
  /// is no gradient region.
  bool optimizerInBackward = false;
  /// Whether the master weights and optimizer state are in host memory, where AdamW runs
  /// (bert.optimizer_on_host), what the trainer takes there (offloadHostBytes) and what of
  /// it is page-locked (offloadPinnedBytes).
  bool optimizerOnHost = false;
  int64_t hostMasterWeightBytes = 0;
  int64_t hostOptimizerStateBytes = 0;
  int64_t offloadHostBytes = 0;
  int64_t offloadPinnedBytes = 0;
  /// The fp32 masters of frozen 16-bit parameters, in host memory (#bert.plan's
  /// frozen_masters): the device holds only their 16-bit working copies.
  int64_t hostFrozenMasterBytes = 0;
  /// Checkpoints waiting in host memory between the forward and the backward (bert.offload):
  /// how many, their host copies' bytes (#bert.plan's host_activations, part of
  /// offloadHostBytes and, on a GPU, of offloadPinnedBytes) and the seconds of each step
  /// their copies down and back up take.
  int64_t offloadedCheckpoints = 0;
  int64_t hostCheckpointBytes = 0;
  double checkpointCopySeconds = 0;
  /// Embedding tables in host memory, read in place by the device's gathers: how many and
  /// their bytes (#bert.plan's host_parameters, part of offloadHostBytes and, on a GPU, of
  /// offloadPinnedBytes).
  int64_t hostTables = 0;
  int64_t hostTableBytes = 0;
  /// Tables that could lie in host memory and do not (--offload-embeddings on would move
  /// them).
  int64_t movableTables = 0;
  /// The host memory what is offloaded may take (--host-ram), set by the driver.
  int64_t hostRamBytes = 0;
  /// Of estimatedStepSeconds, the offloaded optimizer's: PCIe transfers and host AdamW.
  double hostStepSeconds = 0;
  /// Whether the fp32 GEMMs run in TF32 (--tf32 on an fp32 plan; bert.linear's `tf32`).
  bool tf32 = false;
  /// Heads the tensor-core attention takes at a time; 0 for the fused kernels.
  int64_t attentionHeadChunk = 0;
  /// Tokens the LM head loss takes at a time; 0 without an LM head.
  int64_t lmHeadTokenChunk = 0;
  /// With LoRA adapters (bert.adapter_config): the layers adapted, the parameters that train
  /// (the adapters', a task head's) and all of them; 0 without.
  int64_t adaptedLayers = 0;
  int64_t trainableParameters = 0;
  int64_t parameterCount = 0;
  /// A QLoRA base ([lora] base): its weights' format ("nf4_double_quant"), how many, and
  /// their bytes; empty and 0 without.
  std::string quantizedFormat;
  int64_t quantizedWeights = 0;
  int64_t quantizedBytes = 0;
  double stepFlops = 0;
  double estimatedStepSeconds = 0;
  std::string device;           ///< what estimatedStepSeconds is for: "cpu", "sm_80", ...
  std::vector<OpTime> stepTime; ///< where estimatedStepSeconds goes, longest first
  std::vector<RecomputedOp> recompute;
  double recomputeFlops = 0; ///< per optimizer step, included in stepFlops

  /// What --vram must cover: the arena and the reserve.
  int64_t peakBytes() const { return arenaBytes + reserveBytes; }
  /// The precision as people read it: "bf16", "fp32", or "fp32 (TF32 GEMMs)".
  std::string precisionLabel() const { return tf32 ? precision + " (TF32 GEMMs)" : precision; }
  /// Of offloadHostBytes and offloadPinnedBytes, the offloaded optimizer's: all but the
  /// checkpoints' host copies and the embedding tables (which are pinned wherever anything
  /// is, on a GPU).
  int64_t optimizerHostBytes() const {
    return offloadHostBytes - hostCheckpointBytes - hostTableBytes;
  }
  int64_t optimizerPinnedBytes() const {
    return offloadPinnedBytes > 0 ? offloadPinnedBytes - hostCheckpointBytes - hostTableBytes : 0;
  }
};

/// ", attention 6 heads at a time" for the tensor-core attention (head_chunk > 0), nothing
/// for the fused kernels: what the summary and the fit's candidates add to the precision.
std::string attentionLabel(int64_t headChunk);
/// ", LM head 64 tokens at a time" for a causal LM's loss; "" without one.
std::string lmHeadLabel(int64_t tokenChunk);

/// Reads the summary of a module after -bertc-plan-buffers, its step estimated on `device`.
mlir::FailureOr<PlanSummary> summarizePlan(mlir::ModuleOp module, const StepMemory &memory,
                                           int64_t budgetBytes, int64_t reserveBytes,
                                           const DeviceModel &device);

/// plan.json: the machine-readable truth about the plan.
void writePlanJson(const PlanSummary &plan, llvm::raw_ostream &os);

/// The few lines printed for every compile.
void printPlanSummary(const PlanSummary &plan, llvm::raw_ostream &os);

} // namespace bertc
