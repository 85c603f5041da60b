//===- RunChoice.cpp - how bertc runs a job -------------------------------===//

#include "RunChoice.h"

#include "AttentionFlags.h"
#include "OptimizerFlags.h"
#include "TargetFlags.h"

#include "bertc/frontend/JobSpec.h"

#include "llvm/Support/CommandLine.h"

#include <algorithm>

namespace cl = llvm::cl;

namespace bertc {

namespace {

cl::opt<int64_t> microBatch("micro-batch",
                            cl::desc("rows per micro-step; the effective batch is reached by "
                                     "gradient accumulation (default: the fastest split "
                                     "that fits --vram)"),
                            cl::value_desc("N"), cl::init(0), cl::cat(bertcOptions()));
cl::opt<std::string> remat("remat",
                           cl::desc("recomputation in the backward pass: auto (where it "
                                    "lets a faster plan fit) or none"),
                           cl::init("auto"), cl::cat(bertcOptions()));

} // namespace

std::optional<std::string> runFlagsError() {
  if (remat != "none" && remat != "auto")
    return "--remat '" + remat + "': expected none or auto";
  if (microBatch.getNumOccurrences() > 0 && microBatch < 1)
    return std::string("--micro-batch must be at least 1");
  return std::nullopt;
}

std::optional<int64_t> pinnedMicroBatch() {
  return microBatch > 0 ? std::optional<int64_t>(microBatch) : std::nullopt;
}

const std::string &rematMode() { return remat.getValue(); }

std::vector<bool> targetOffloadOptimizerCandidates() {
  return cudaTarget() ? offloadOptimizerCandidates() : std::vector<bool>{offloadOptimizerPinned()};
}

RunChoice chooseRun(const JobSpec &spec, std::optional<int64_t> arenaBudget,
                    mlir::MLIRContext &ctx) {
  std::optional<int64_t> pinnedRows;
  if (microBatch > 0)
    pinnedRows = std::min<int64_t>(microBatch, spec.train.batch);
  std::vector<std::string> precisions = precisionCandidates(spec);
  RunChoice choice{pinnedRows.value_or(spec.train.batch),
                   {precisions.front(), 0, gemmWorkspaceBytes(), targetArch(),
                    optimizerStateCandidates().front(), fuseOptimizerCandidates().front(),
                    targetOffloadOptimizerCandidates().front(), tf32Gemms(),
                    headChunkCandidates(spec.model.heads, cudaTarget()).front()},
                   {}};
  if (!arenaBudget)
    return choice;
  FitRequest request;
  request.arenaBudget = *arenaBudget;
  request.microBatch = pinnedRows;
  request.precisions = precisions;
  if (remat == "none")
    request.recompute = {false};
  request.device = &targetDeviceModel();
  request.arch = targetArch();
  request.optimizerStates = optimizerStateCandidates();
  request.fuseOptimizer = fuseOptimizerCandidates();
  request.offloadOptimizer = targetOffloadOptimizerCandidates();
  request.hostRamBudget = hostRamBudget();
  request.tf32 = tf32Gemms();
  request.headChunks = headChunkCandidates(spec.model.heads, cudaTarget());
  request.gemmWorkspaceBytes = gemmWorkspaceBytes();
  choice.ranked = searchFittingPlans(spec, request, ctx);
  if (!choice.ranked.empty()) {
    choice.microBatch = choice.ranked.front().microBatch;
    choice.options = choice.ranked.front().options;
  } else {
    // Nothing fits: the over-budget report and its ways to fit are planned as the search
    // planned, recomputing where it may and with the attention of the smallest workspace.
    if (remat != "none")
      choice.options.rematArenaBudget = *arenaBudget;
    choice.options.attentionHeadChunk = request.headChunks.back();
  }
  return choice;
}

} // namespace bertc
