//===- FitDriver.cpp - the fastest plan that fits the budget --------------===//

#include "bertc/Driver/FitDriver.h"

#include "bertc/Driver/ByteSize.h"
#include "bertc/Driver/PlanReport.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;

namespace bertc {

std::string loraBaseLabel(StringRef base) {
  return base == "nf4" ? ", NF4 base" : base == "int8" ? ", int8 base" : "";
}

std::string FitCandidate::describe() const {
  return llvm::formatv("micro-batch {0} x {1}, {2}{3}, {4}{5}{6}{7}{8}{9}{10}{11}{12}", microBatch,
                       accumulation, options.precision,
                       options.tf32 && options.precision == "fp32" ? " (TF32 GEMMs)" : "",
                       recomputes() ? "recompute" : "keep activations",
                       options.optimizerState == "8bit" ? ", 8-bit AdamW state" : "",
                       options.fuseOptimizer ? ", AdamW in the backward" : "",
                       options.offloadOptimizer ? ", optimizer in host memory" : "",
                       outcome.checkpointBytes > 0 ? ", checkpoints in host memory" : "",
                       outcome.hostTableBytes > 0 ? ", embeddings in host memory" : "",
                       attentionLabel(options.attentionHeadChunk),
                       lmHeadLabel(options.lmHeadTokenChunk), loraBaseLabel(loraBase));
}

namespace {

/// The micro-batches worth planning, largest first: for 1, 2, 4, ... accumulation steps,
/// the largest divisor of the batch that splits it into at least that many, so that every
/// candidate runs exactly the effective batch (100: 100, 50, 25, 10, 5, 2, 1).
std::vector<int64_t> microBatchCandidates(int64_t batch) {
  std::vector<int64_t> divisors = batchDivisors(batch);
  std::vector<int64_t> sizes;
  for (int64_t steps = 1;; steps *= 2) {
    int64_t rows = *std::prev(llvm::upper_bound(divisors, batch / steps));
    if (sizes.empty() || rows < sizes.back())
      sizes.push_back(rows);
    if (rows == 1)
      return sizes;
  }
}

} // namespace

std::optional<std::string> microBatchError(int64_t microBatch, int64_t batch) {
  if (microBatch > batch)
    return llvm::formatv("--micro-batch {0} is more than [train] batch {1}: a micro-batch is a "
                         "part of the batch (pass at most {1})",
                         microBatch, batch)
        .str();
  if (batch % microBatch == 0)
    return std::nullopt;
  std::vector<int64_t> divisors = batchDivisors(batch);
  auto above = llvm::upper_bound(divisors, microBatch);
  return llvm::formatv("--micro-batch {0} does not divide [train] batch {1}: the steps would "
                       "run {2} rows, not {1}; the nearest micro-batches that divide it are "
                       "{3} and {4}",
                       microBatch, batch, (batch + microBatch - 1) / microBatch * microBatch,
                       *std::prev(above), *above)
      .str();
}

std::optional<std::string> fuseOptimizerError(const JobSpec &spec, int64_t microBatch,
                                              StringRef precision) {
  if (microBatch < spec.train.batch)
    return llvm::formatv("micro-batch {0} runs [train] batch {1} in several micro-steps, and an "
                         "update in the backward needs the whole batch in one",
                         microBatch, spec.train.batch)
        .str();
  if (spec.train.maxGradNorm > 0)
    return llvm::formatv("[train] max_grad_norm = {0} clips by the norm of every gradient, "
                         "known only after the whole backward",
                         llvm::format("%g", spec.train.maxGradNorm))
        .str();
  if (precision == "fp16")
    return std::string("fp16's loss scaling skips the whole update when any gradient "
                       "overflows (use bf16 or fp32)");
  return std::nullopt;
}

std::vector<FitCandidate> searchFittingPlans(const JobSpec &spec, const FitRequest &request,
                                             MLIRContext &ctx) {
  std::vector<int64_t> sizes =
      request.microBatch ? std::vector<int64_t>{std::min(*request.microBatch, spec.train.batch)}
                         : microBatchCandidates(spec.train.batch);
  std::vector<FitCandidate> fitting;
  // The job as planned now: with each of the LoRA bases in turn.
  JobSpec variant = spec;
  // Plans `rows` with `options`: the outcome if it fits.
  auto plan = [&](int64_t rows, const PipelineOptions &options) -> std::optional<PlanOutcome> {
    FailureOr<PlanOutcome> outcome = planJob(
        variant, {rows, spec.train.seqLen, spec.train.freeze, options}, *request.device, ctx);
    if (failed(outcome) || outcome->arenaBytes > request.arenaBudget ||
        outcome->hostBytes > request.hostRamBudget)
      return std::nullopt;
    return *outcome;
  };
  // Plans `rows` with the first of the LM head's token chunks that fits (the largest: its
  // weight-gradient GEMMs run deepest), setting it in `options`. The smallest is planned
  // second: a plan that does not fit with it fits with none.
  ArrayRef<int64_t> tokenChunks = request.lmHeadTokenChunks;
  auto largestTokenChunkPlan = [&](int64_t rows,
                                   PipelineOptions &options) -> std::optional<PlanOutcome> {
    options.lmHeadTokenChunk = tokenChunks.front();
    std::optional<PlanOutcome> outcome = plan(rows, options);
    if (outcome || tokenChunks.size() == 1)
      return outcome;
    PipelineOptions smallest = options;
    smallest.lmHeadTokenChunk = tokenChunks.back();
    std::optional<PlanOutcome> smallestOutcome = plan(rows, smallest);
    if (!smallestOutcome)
      return std::nullopt;
    for (int64_t chunk : tokenChunks.drop_front().drop_back()) {
      options.lmHeadTokenChunk = chunk;
      if ((outcome = plan(rows, options)))
        return outcome;
    }
    options = smallest;
    return smallestOutcome;
  };
  // Plans `rows` and keeps it, with the LM head's largest token chunk that fits and the
  // fastest head chunk, when it fits; says whether it did.
  auto tryPlan = [&](int64_t rows, PipelineOptions options) {
    ArrayRef<int64_t> chunks = request.headChunks;
    options.attentionHeadChunk = chunks.back();
    std::optional<PlanOutcome> best = largestTokenChunkPlan(rows, options);
    if (!best)
      return false;
    PipelineOptions chunked = options;
    for (int64_t chunk : chunks.drop_back()) {
      chunked.attentionHeadChunk = chunk;
      if (std::optional<PlanOutcome> outcome = plan(rows, chunked)) {
        if (outcome->cost.seconds < best->cost.seconds) {
          best = outcome;
          options = chunked;
        }
        break;
      }
    }
    fitting.push_back({rows, spec.train.batch / rows, options, *best, variant.lora.base});
    return true;
  };
  // Plans the first `count` sizes with `options`.
  auto trySizes = [&](PipelineOptions options, size_t count) {
    // Without recomputation the arena grows with the micro-batch: the first (largest)
    // that fits is the only one worth keeping.
    size_t keepingFits = count;
    if (llvm::is_contained(request.recompute, false))
      for (size_t i = 0; i < count && keepingFits == count; ++i)
        if (tryPlan(sizes[i], options))
          keepingFits = i;
    // Recomputation buys the larger micro-batches, each at its own cost; and the size that
    // kept its activations only by shrinking the LM head's chunk may run faster recomputing
    // with the chunk whole.
    size_t recomputing = keepingFits;
    if (keepingFits < count && fitting.back().options.lmHeadTokenChunk != tokenChunks.front())
      recomputing = keepingFits + 1;
    options.rematArenaBudget = request.arenaBudget;
    if (llvm::is_contained(request.recompute, true))
      for (size_t i = 0; i < recomputing; ++i)
        for (bool offload : request.offloadCheckpoints) {
          options.offloadCheckpoints = offload;
          if (tryPlan(sizes[i], options))
            break;
        }
  };
  std::vector<std::string> bases = request.loraBases;
  if (bases.empty())
    bases = {spec.lora.base};
  // A quantized base changes what trains: the first base with a plan that fits is kept.
  // The embedding tables go to host memory before the base is quantized (training is the
  // same bit for bit), only where no plan fits with them on the device.
  for (const std::string &base : bases)
    for (bool hostEmbeddings : request.hostEmbeddings) {
      if (!fitting.empty())
        break;
      variant.lora.base = base;
      for (const std::string &state : request.optimizerStates)
        for (const std::string &precision : request.precisions)
          for (bool fuse : request.fuseOptimizer)
            for (bool offload : request.offloadOptimizer) {
              // An update in the backward runs the whole batch at once: the first size only;
              // it runs on the device, never with the optimizer in host memory.
              size_t count = sizes.size();
              if (fuse)
                count = offload || fuseOptimizerError(spec, sizes.front(), precision) ? 0 : 1;
              PipelineOptions options{precision,    0,     request.gemmWorkspaceBytes,
                                      request.arch, state, fuse};
              options.offloadOptimizer = offload;
              options.hostEmbeddings = hostEmbeddings;
              options.hostRamBudget = request.hostRamBudget;
              options.tf32 = request.tf32;
              trySizes(options, count);
            }
    }
  // On equal estimates: the preferred optimizer state, placement, then memory.
  auto preference = [&](const FitCandidate &candidate) {
    auto rank = [](const auto &candidates, const auto &value) {
      return llvm::find(candidates, value) - candidates.begin();
    };
    return std::tuple(rank(request.optimizerStates, candidate.options.optimizerState),
                      rank(request.fuseOptimizer, candidate.options.fuseOptimizer),
                      rank(request.offloadOptimizer, candidate.options.offloadOptimizer));
  };
  std::stable_sort(fitting.begin(), fitting.end(),
                   [&](const FitCandidate &a, const FitCandidate &b) {
                     if (a.outcome.cost.seconds != b.outcome.cost.seconds)
                       return a.outcome.cost.seconds < b.outcome.cost.seconds;
                     if (preference(a) != preference(b))
                       return preference(a) < preference(b);
                     return a.outcome.arenaBytes < b.outcome.arenaBytes;
                   });
  return fitting;
}

void printFitChoice(ArrayRef<FitCandidate> ranked, const DeviceModel &device, raw_ostream &os) {
  if (ranked.empty())
    return;
  auto line = [&](StringRef label, const FitCandidate &candidate) {
    os << llvm::formatv("  {0,-7} {1}: {2}, est. {3:f3} s/step on {4}\n", label,
                        candidate.describe(), formatBytes(candidate.outcome.arenaBytes),
                        candidate.outcome.cost.seconds, device.name);
  };
  line("chosen", ranked.front());
  for (const FitCandidate &runnerUp : ranked.drop_front().take_front(3))
    line("also", runnerUp);
}

} // namespace bertc
