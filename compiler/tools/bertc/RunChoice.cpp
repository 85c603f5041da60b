//===- RunChoice.cpp - how bertc runs a job -------------------------------===//

#include "RunChoice.h"

#include "AttentionFlags.h"
#include "OptimizerFlags.h"
#include "TargetFlags.h"

#include "bertc/abi/lm_head_loss.h"
#include "bertc/frontend/JobSpec.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdint>

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
cl::opt<std::string> offloadCheckpoints(
    "offload-checkpoints",
    cl::desc("where the backward's checkpoints (what the forward keeps for it: each "
             "recomputation block's input and what the block does not recompute) wait: off "
             "(on the device, default), on (in host memory: copied down as the forward makes "
             "them and back up before the backward reads them, over PCIe, where that is "
             "cheaper than recomputing them) or auto (on the cuda targets, in host memory "
             "where recomputation alone does not fit)"),
    cl::init("off"), cl::cat(bertcOptions()));
cl::opt<std::string> offloadEmbeddings(
    "offload-embeddings",
    cl::desc("where a frozen embedding table that only gathers read lies (not one the LM head "
             "shares): off (on the device, default), on (in host memory, page-locked and "
             "mapped: the device gathers the batch's rows over PCIe) or auto (on the cuda "
             "targets, in host memory where no plan fits with it on the device)"),
    cl::init("off"), cl::cat(bertcOptions()));

/// The smallest LM head token chunk the fit driver tries: 16 tokens' logits are a few MiB
/// of even a 256k vocabulary, and fewer tokens only starve the weight-gradient GEMMs.
constexpr int64_t kSmallestLmHeadTokenChunk = 16;

} // namespace

std::optional<std::string> runFlagsError() {
  if (remat != "none" && remat != "auto")
    return "--remat '" + remat + "': expected none or auto";
  if (!llvm::is_contained({"off", "on", "auto"}, offloadCheckpoints.getValue()))
    return "--offload-checkpoints '" + offloadCheckpoints + "': expected off, on or auto";
  if (offloadCheckpoints != "off" && remat == "none")
    return "--offload-checkpoints " + offloadCheckpoints +
           " needs --remat auto: the recomputation chooses what waits in host memory";
  if (!llvm::is_contained({"off", "on", "auto"}, offloadEmbeddings.getValue()))
    return "--offload-embeddings '" + offloadEmbeddings + "': expected off, on or auto";
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

namespace {
/// The candidates of a host-memory off|on|auto flag, on the device first: `auto` is an
/// axis on the cuda targets only (on the CPU host and device memory are one).
std::vector<bool> hostPlacementCandidates(llvm::StringRef value) {
  if (value == "auto")
    return cudaTarget() ? std::vector<bool>{false, true} : std::vector<bool>{false};
  return {value == "on"};
}
} // namespace

std::vector<bool> targetOffloadCheckpointCandidates() {
  return hostPlacementCandidates(offloadCheckpoints);
}

bool hostEmbeddingsRequired() { return offloadEmbeddings == "on"; }

std::vector<bool> targetHostEmbeddingCandidates() {
  return hostPlacementCandidates(offloadEmbeddings);
}

std::vector<int64_t> lmHeadTokenChunkCandidates(const JobSpec &spec) {
  std::vector<int64_t> chunks = {0};
  if (spec.head.task != "causal_lm")
    return chunks;
  // Powers of two below the default, which is at most a step's tokens; always the smallest.
  int64_t tokens = spec.train.batch * spec.train.seqLen;
  int64_t chunk = int64_t(1) << llvm::Log2_64(defaultLmHeadTokenChunk(spec.model.vocab, tokens));
  for (chunk /= 2; chunk > kSmallestLmHeadTokenChunk; chunk /= 2)
    chunks.push_back(chunk);
  chunks.push_back(kSmallestLmHeadTokenChunk);
  return chunks;
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
                   {},
                   spec.lora.baseCandidates().front()};
  choice.options.hostEmbeddings = targetHostEmbeddingCandidates().front();
  if (!arenaBudget)
    return choice;
  FitRequest request;
  request.arenaBudget = *arenaBudget;
  request.microBatch = pinnedRows;
  request.precisions = precisions;
  if (remat == "none")
    request.recompute = {false};
  // The checkpoints are the recomputation blocks' inputs: pinned in host memory, every plan
  // goes through the recomputation pass (which may recompute nothing).
  if (offloadCheckpoints == "on")
    request.recompute = {true};
  request.device = &targetDeviceModel();
  request.arch = targetArch();
  request.optimizerStates = optimizerStateCandidates();
  request.fuseOptimizer = fuseOptimizerCandidates();
  request.offloadOptimizer = targetOffloadOptimizerCandidates();
  request.offloadCheckpoints = targetOffloadCheckpointCandidates();
  request.hostEmbeddings = targetHostEmbeddingCandidates();
  request.hostRamBudget = hostRamBudget();
  request.tf32 = tf32Gemms();
  request.headChunks = headChunkCandidates(spec.model.heads, cudaTarget());
  request.lmHeadTokenChunks = lmHeadTokenChunkCandidates(spec);
  request.gemmWorkspaceBytes = gemmWorkspaceBytes();
  request.loraBases = spec.lora.baseCandidates();
  choice.ranked = searchFittingPlans(spec, request, ctx);
  if (!choice.ranked.empty()) {
    choice.microBatch = choice.ranked.front().microBatch;
    choice.options = choice.ranked.front().options;
    choice.loraBase = choice.ranked.front().loraBase;
  } else {
    choice.loraBase = request.loraBases.back();
    // Nothing fits: the over-budget report and its ways to fit are planned as the search
    // planned, recomputing where it may, with the attention and LM head of the smallest
    // workspaces.
    if (remat != "none") {
      choice.options.rematArenaBudget = *arenaBudget;
      choice.options.offloadCheckpoints = request.offloadCheckpoints.back();
      choice.options.hostRamBudget = request.hostRamBudget;
    }
    choice.options.hostEmbeddings = request.hostEmbeddings.back();
    choice.options.attentionHeadChunk = request.headChunks.back();
    choice.options.lmHeadTokenChunk = request.lmHeadTokenChunks.back();
  }
  return choice;
}

} // namespace bertc
