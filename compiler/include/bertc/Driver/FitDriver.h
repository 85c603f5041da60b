//===- FitDriver.h - the fastest plan that fits the budget ------*- C++ -*-===//
//
// `bertc model.toml --vram 6GB` decides on its own how to run the effective batch: as
// micro-batches and accumulation steps, at a precision, keeping every activation or
// recomputing some, (with --optimizer-state auto) with fp32 or 8-bit AdamW moments,
// (with --fuse-optimizer auto) with AdamW after the backward or in it, and (with
// --offload-optimizer auto) with the optimizer on the device or in host memory, and
// (--offload-checkpoints auto, where recomputation alone does not fit) with the backward's
// checkpoints in host memory, and (--offload-embeddings auto, where nothing fits otherwise)
// with the frozen embedding tables in host memory.
// Each combination is planned through the real pipeline; the fastest by estimated step
// time whose arena fits is chosen. Flags pin any axis. With [lora] base = "auto" a LoRA
// job's frozen base is the least quantized that fits: the precision's storage, else int8
// rows, else NF4 (a quantized base changes what trains, so it is no speed axis).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Driver/PlanSearch.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace bertc {

/// The axes of the search and the budget.
struct FitRequest {
  int64_t arenaBudget = 0;
  std::optional<int64_t> microBatch;   ///< pinned by --micro-batch
  std::vector<std::string> precisions; ///< candidates, the preferred first
  std::vector<bool> recompute = {false, true};
  const DeviceModel *device = nullptr;
  std::string arch; ///< --arch, for the passes that price their choices
  /// PipelineOptions::optimizerState candidates, the preferred first (on equal estimates).
  std::vector<std::string> optimizerStates = {"fp32"};
  /// PipelineOptions::fuseOptimizer candidates, the preferred first (on equal estimates).
  /// An update in the backward is planned only where it can run: one micro-step per
  /// optimizer step, no clipping, no fp16.
  std::vector<bool> fuseOptimizer = {false};
  /// PipelineOptions::offloadOptimizer candidates, the preferred first (on equal
  /// estimates). Never with an update in the backward.
  std::vector<bool> offloadOptimizer = {false};
  /// PipelineOptions::offloadCheckpoints candidates for the plans that recompute: each
  /// micro-batch takes the first with which it fits (a later one where the earlier do not).
  std::vector<bool> offloadCheckpoints = {false};
  /// PipelineOptions::hostEmbeddings candidates: for each LoRA base, the first with which
  /// any plan fits (so the tables go to host memory before the base is quantized).
  std::vector<bool> hostEmbeddings = {false};
  /// Host memory what is offloaded may take (PlanOutcome::hostBytes).
  int64_t hostRamBudget = 0;
  /// How a LoRA job's frozen base may be stored (LoraSpec::baseCandidates), in the order
  /// tried: the candidates are those of the first base with any that fits. Empty, the
  /// job's own (LoraSpec::base).
  std::vector<std::string> loraBases;

  /// PipelineOptions::attentionHeadChunk candidates, the most heads at a time first. The
  /// last, the one with the smallest workspace (0, the fused kernels), is planned first:
  /// a plan that does not fit with it fits with none. Then the first of the others that
  /// fits replaces it if it is faster.
  std::vector<int64_t> headChunks = {0};
  /// PipelineOptions::lmHeadTokenChunk candidates, the largest first (0: the default
  /// chunk, lm_head_loss.h): a plan takes the first that fits. {0} without an LM head.
  std::vector<int64_t> lmHeadTokenChunks = {0};

  int64_t gemmWorkspaceBytes = 0; ///< PipelineOptions::gemmWorkspaceBytes of every plan
  bool tf32 = false;              ///< PipelineOptions::tf32 of every plan (--tf32)
};

/// ", NF4 base" or ", int8 base" for a quantized LoRA base (LoraSpec::base), else "".
std::string loraBaseLabel(llvm::StringRef base);

/// One way to run the job that fits, with its estimate.
struct FitCandidate {
  int64_t microBatch = 0;
  int64_t accumulation = 0;
  PipelineOptions options;
  PlanOutcome outcome;
  /// The LoRA base's storage the plan was built with (LoraSpec::base; a request's
  /// loraBases entry).
  std::string loraBase;

  bool recomputes() const { return options.rematArenaBudget > 0; }
  /// "micro-batch 16 x 2, bf16, recompute" (", 8-bit AdamW state" when it has one,
  /// ", AdamW in the backward" when it runs there, ", optimizer in host memory" when
  /// offloaded, ", checkpoints in host memory" when they are, ", attention 6 heads at a
  /// time" for the tensor-core attention; "fp32
  /// (TF32 GEMMs)" for fp32 with --tf32; ", NF4 base" or ", int8 base" for a quantized
  /// LoRA base).
  std::string describe() const;
};

/// Why `microBatch` cannot run `batch` (it is more than the batch, or it does not divide it,
/// so the steps would run a rounded-up batch, naming the nearest micro-batches that can);
/// nothing when it can.
std::optional<std::string> microBatchError(int64_t microBatch, int64_t batch);

/// Why `spec`'s AdamW updates cannot run in the backward at `microBatch` rows and
/// `precision` (-bertc-fuse-optimizer's conditions); nothing when they can.
std::optional<std::string> fuseOptimizerError(const JobSpec &spec, int64_t microBatch,
                                              llvm::StringRef precision);

/// Every candidate that fits, the fastest first (ties: the preferred optimizer state, then
/// the preferred update placement, then the preferred optimizer memory, then the smaller
/// arena); empty when nothing fits. An offloaded candidate fits when its host memory does
/// too. Only the
/// largest fitting micro-batch of each (precision, recompute) pair is kept without recomputation,
/// as a smaller one only adds steps.
std::vector<FitCandidate> searchFittingPlans(const JobSpec &spec, const FitRequest &request,
                                             mlir::MLIRContext &ctx);

/// The plan chosen and up to three runners-up, with their estimates.
void printFitChoice(llvm::ArrayRef<FitCandidate> ranked, const DeviceModel &device,
                    llvm::raw_ostream &os);

} // namespace bertc
