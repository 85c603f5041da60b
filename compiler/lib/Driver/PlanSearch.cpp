//===- PlanSearch.cpp - planning a job at other settings ------------------===//

#include "bertc/Driver/PlanSearch.h"

#include "bertc/Driver/FitDriver.h"

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Driver/ByteSize.h"
#include "bertc/Driver/PlanReport.h"
#include "bertc/Transforms/Pipeline.h"
#include "bertc/frontend/GraphBuilder.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace bertc {

FailureOr<PlanOutcome> planJob(const JobSpec &spec, const PlanPoint &point,
                               const DeviceModel &device, MLIRContext &ctx) {
  // A variation of a valid job is valid; any diagnostic would be about the variation,
  // which the caller reports as "does not plan", so they are not shown.
  ScopedDiagnosticHandler silence(&ctx, [](Diagnostic &) { return success(); });
  JobSpec variant = spec;
  variant.train.seqLen = point.seqLen;
  variant.train.freeze = point.freeze;
  variant.train.batch = std::max(variant.train.batch, point.microBatch);
  OwningOpRef<ModuleOp> module = buildTrainGraph(variant, point.microBatch, ctx);
  if (!module)
    return failure();
  PassManager pm(&ctx);
  buildPipeline(pm, Stage::Forward, Stage::Planned, point.options);
  if (failed(pm.run(*module)))
    return failure();
  bert::PlanAttr plan = findPlan(*module);
  return PlanOutcome{plan.getDeviceBytes(),
                     offloadHostBytes(plan, device.target == bert::CostTarget::Cuda),
                     estimateStepCost(*module, device), plan.getHostActivations().bytes,
                     plan.getHostParameters().bytes};
}

FailureOr<int64_t> planArenaBytes(const JobSpec &spec, const PlanPoint &point, MLIRContext &ctx) {
  FailureOr<PlanOutcome> outcome = planJob(spec, point, cpuDeviceModel(), ctx);
  // Offloaded checkpoints grow with the batch: past the host memory they may take, the
  // plan does not fit.
  int64_t hostBudget = point.options.offloadCheckpoints ? point.options.hostRamBudget : 0;
  if (failed(outcome) || (hostBudget > 0 && outcome->hostBytes > hostBudget))
    return failure();
  return outcome->arenaBytes;
}

namespace {

/// The largest n in [1, limit] whose arena, `arenaAt(n)` (failure: does not plan), is at
/// most `budget`, for an arena that grows with n: doubling from 1, then bisection
/// between the last n that fits and the first that does not.
Fitting largestFitting(int64_t limit, int64_t budget,
                       llvm::function_ref<FailureOr<int64_t>(int64_t)> arenaAt) {
  Fitting best;
  auto fits = [&](int64_t n) {
    FailureOr<int64_t> bytes = arenaAt(n);
    if (failed(bytes) || *bytes > budget)
      return false;
    best = {n, *bytes}; // n only grows: every n that fits is larger than the last
    return true;
  };
  if (limit < 1 || !fits(1))
    return best;
  int64_t bad = limit + 1; // the smallest n known not to fit (or past the limit)
  while (best.value * 2 < bad)
    if (!fits(best.value * 2))
      bad = best.value * 2;
  while (bad - best.value > 1) {
    int64_t mid = best.value + (bad - best.value) / 2;
    if (!fits(mid))
      bad = mid;
  }
  return best;
}

} // namespace

Fitting largestFittingMicroBatch(const JobSpec &spec, int64_t seqLen, int64_t limit,
                                 int64_t arenaBudget, const PipelineOptions &options,
                                 MLIRContext &ctx) {
  return largestFitting(limit, arenaBudget, [&](int64_t rows) {
    return planArenaBytes(spec, {rows, seqLen, spec.train.freeze, options}, ctx);
  });
}

Fitting largestFittingSeqLen(const JobSpec &spec, int64_t microBatch, int64_t limit,
                             int64_t arenaBudget, const PipelineOptions &options,
                             MLIRContext &ctx) {
  return largestFitting(limit, arenaBudget, [&](int64_t seq) {
    return planArenaBytes(spec, {microBatch, seq, spec.train.freeze, options}, ctx);
  });
}

std::vector<int64_t> batchDivisors(int64_t batch) {
  std::vector<int64_t> divisors;
  for (int64_t rows = 1; rows <= batch; ++rows)
    if (batch % rows == 0)
      divisors.push_back(rows);
  return divisors;
}

Fitting largestFittingDivisor(const JobSpec &spec, int64_t limit, int64_t arenaBudget,
                              const PipelineOptions &options, MLIRContext &ctx) {
  std::vector<int64_t> divisors = batchDivisors(spec.train.batch);
  llvm::erase_if(divisors, [&](int64_t rows) { return rows > limit; });
  Fitting index = largestFitting(int64_t(divisors.size()), arenaBudget, [&](int64_t i) {
    return planArenaBytes(spec, {divisors[i - 1], spec.train.seqLen, spec.train.freeze, options},
                          ctx);
  });
  return {index.value > 0 ? divisors[index.value - 1] : 0, index.arenaBytes};
}

namespace {

/// A way to freeze: the `freeze` entries to add, as written in TOML, and the groups they
/// name.
struct FreezeChoice {
  std::string toml;
  std::vector<std::string> groups;
};

/// The ways to freeze a job's trainable parameters that the advice plans: each coarse
/// group ("embeddings", "encoder", the head's), then the embeddings with the lower half of
/// the encoder's layers (the layers that change least in fine-tuning).
std::vector<FreezeChoice> freezeCandidates(const StepMemory &memory, const JobSpec &spec) {
  llvm::StringSet<> seen;
  std::vector<FreezeChoice> choices;
  for (const PlannedParam &param : memory.params) {
    std::string group = StringRef(param.group).starts_with("encoder.") ? "encoder" : param.group;
    if (param.totalBytes > param.bytes && !spec.isFrozen(param.group) && seen.insert(group).second)
      choices.push_back({"\"" + group + "\"", {group}});
  }
  int64_t half = spec.model.layers / 2;
  if (half > 0 && seen.contains("encoder") && seen.contains("embeddings")) {
    std::string layers =
        half == 1 ? "encoder.layer.0" : llvm::formatv("encoder.layer.0-{0}", half - 1).str();
    FreezeChoice lower{"\"embeddings\", \"" + layers + "\"", {"embeddings"}};
    for (int64_t layer = 0; layer < half; ++layer)
      lower.groups.push_back("encoder.layer." + std::to_string(layer));
    choices.push_back(std::move(lower));
  }
  return choices;
}

/// The largest multiple of 8 below the job's seq_len that fits at `microBatch`.
/// The longest seq_len below the job's, a multiple of 8, that fits at `microBatch`.
Fitting shorterFittingSeqLen(const JobSpec &spec, int64_t microBatch, int64_t arenaBudget,
                             const PipelineOptions &options, MLIRContext &ctx) {
  Fitting units = largestFitting((spec.train.seqLen + 7) / 8 - 1, arenaBudget, [&](int64_t eights) {
    return planArenaBytes(spec, {microBatch, eights * 8, spec.train.freeze, options}, ctx);
  });
  return {units.value * 8, units.arenaBytes};
}

} // namespace

void printFitAdvice(const JobSpec &spec, const PlanSummary &plan, const StepMemory &memory,
                    int64_t arenaBudget, const PipelineOptions &options, MLIRContext &ctx,
                    raw_ostream &os) {
  // 1. What dominates: the tensors live at the peak, and the parameters with their
  //    gradients and moments, the larger first, each with its largest members.
  std::vector<const PlannedTensor *> live = liveAt(memory, memory.peakStep);
  int64_t paramTotal =
      plan.parameterBytes + plan.gradientBytes + plan.optimizerStateBytes + plan.masterWeightBytes;
  auto printLive = [&] {
    os << llvm::formatv("  tensors live at the peak ({0}): {1} in {2} tensors, the largest\n",
                        memory.steps.empty() ? "" : memory.steps[memory.peakStep],
                        formatBytes(memory.peakLiveBytes), live.size());
    for (const PlannedTensor *tensor : ArrayRef(live).take_front(3))
      os << llvm::formatv("    {0} {1} {2}, {3} ({4}{5}{6})\n", tensor->name, tensor->shape,
                          tensor->dtype, formatBytes(tensor->bytes), tensor->category,
                          tensor->origin.empty() ? "" : ", ", tensor->origin);
  };
  // The dtype of a parameter's value: its working copy's.
  auto valueDtype = [](const PlannedParam &param) -> StringRef {
    for (const PlannedParam::Slot &slot : param.slots)
      if (slot.kind == bert::ParamSlotKind::Value)
        return slot.dtype;
    return "f32";
  };
  auto printParams = [&] {
    os << llvm::formatv("  parameters with their gradients and AdamW moments: {0}, the "
                        "largest\n",
                        formatBytes(paramTotal));
    for (const PlannedParam &param : ArrayRef(memory.params).take_front(3))
      os << llvm::formatv("    {0} {1} {2}, {3} ({4} with gradient and moments{5}{6})\n",
                          param.name, param.shape, valueDtype(param), formatBytes(param.bytes),
                          formatBytes(param.totalBytes), param.origin.empty() ? "" : ", ",
                          param.origin);
  };
  os << "what dominates the plan:\n";
  if (paramTotal >= memory.peakLiveBytes) {
    printParams();
    printLive();
  } else {
    printLive();
    printParams();
  }

  // 2. Ways to fit, each planned for real.
  os << llvm::formatv("ways to fit {0} of arena (the budget less {1} reserved):\n",
                      formatBytes(arenaBudget), formatBytes(plan.reserveBytes));
  bool anyFits = false;
  auto arenaAt = [&](int64_t rows, int64_t seq, const std::vector<std::string> &freeze) {
    FailureOr<int64_t> bytes = planArenaBytes(spec, {rows, seq, freeze, options}, ctx);
    return succeeded(bytes) ? *bytes : int64_t(-1);
  };
  const std::vector<std::string> &frozen = spec.train.freeze;
  Fitting rows = largestFittingDivisor(spec, plan.microBatch - 1, arenaBudget, options, ctx);
  if (rows.value > 0) {
    anyFits = true;
    int64_t steps = spec.train.batch / rows.value;
    os << llvm::formatv("  - micro-batch {0} x {1} accumulation steps (the same effective "
                        "batch of {2}): {3} (--micro-batch {0})\n",
                        rows.value, steps, spec.train.batch, formatBytes(rows.arenaBytes));
  } else if (int64_t one = arenaAt(1, spec.train.seqLen, frozen); one > 0) {
    os << llvm::formatv("  - no micro-batch fits: even 1 row needs {0}\n", formatBytes(one));
  }
  // Plans `options` at the plan's micro-batch and prints it as `flag` (`what` it does);
  // where no micro-batch fits without it, also the largest it lets fit with accumulation.
  auto adviseAlone = [&](const PipelineOptions &changed, StringRef flag, StringRef what) {
    FailureOr<int64_t> bytes =
        planArenaBytes(spec, {plan.microBatch, spec.train.seqLen, frozen, changed}, ctx);
    if (succeeded(bytes)) {
      anyFits |= *bytes <= arenaBudget;
      os << llvm::formatv("  - {0} ({1}): {2}{3}\n", flag, what, formatBytes(*bytes),
                          *bytes <= arenaBudget ? "" : ", not enough alone");
    }
    // (An update in the backward needs the whole batch in one micro-step.)
    if ((succeeded(bytes) && *bytes <= arenaBudget) || rows.value > 0 || changed.fuseOptimizer)
      return;
    Fitting withRows = largestFittingDivisor(spec, plan.microBatch - 1, arenaBudget, changed, ctx);
    if (withRows.value > 0) {
      anyFits = true;
      os << llvm::formatv("  - {0} with micro-batch {1} x {2} accumulation steps: {3}\n", flag,
                          withRows.value, spec.train.batch / withRows.value,
                          formatBytes(withRows.arenaBytes));
    }
  };
  if (plan.optimizerState != "8bit") {
    PipelineOptions eightBit = options;
    eightBit.optimizerState = "8bit";
    adviseAlone(eightBit, "--optimizer-state 8bit",
                "AdamW moments 8-bit, blockwise, as bitsandbytes' Adam8bit");
  }
  // The gradient region goes when each update runs in the backward.
  if (!plan.optimizerInBackward && !fuseOptimizerError(spec, plan.microBatch, plan.precision)) {
    PipelineOptions inBackward = options;
    inBackward.fuseOptimizer = true;
    inBackward.offloadOptimizer = false;
    adviseAlone(inBackward, "--fuse-optimizer on",
                "each AdamW update in the backward, no gradient region");
  }
  // A GPU's host can keep the masters and moments (ZeRO-Offload).
  if (!plan.optimizerOnHost && !plan.optimizerInBackward && plan.device != "cpu") {
    PipelineOptions onHost = options;
    onHost.offloadOptimizer = true;
    adviseAlone(onHost, "--offload-optimizer on",
                "master weights and AdamW state in host memory, as ZeRO-Offload");
  }
  // A GPU's host can keep what the backward reads (offloaded checkpointing).
  if (!options.offloadCheckpoints && options.rematArenaBudget > 0 && plan.device != "cpu") {
    PipelineOptions offloaded = options;
    offloaded.offloadCheckpoints = true;
    adviseAlone(offloaded, "--offload-checkpoints on",
                "what the backward reads of the forward in host memory");
  }
  // A GPU's host can keep the frozen tables only gathers read.
  if (plan.movableTables > 0 && plan.device != "cpu") {
    PipelineOptions tablesOnHost = options;
    tablesOnHost.hostEmbeddings = true;
    adviseAlone(tablesOnHost, "--offload-embeddings on",
                "frozen embedding tables in host memory, the batch's rows gathered from there");
  }
  if (Fitting seq = shorterFittingSeqLen(spec, plan.microBatch, arenaBudget, options, ctx);
      seq.value > 0) {
    anyFits = true;
    os << llvm::formatv("  - seq_len = {0} (now {1}) at micro-batch {2}: {3}\n", seq.value,
                        spec.train.seqLen, plan.microBatch, formatBytes(seq.arenaBytes));
  }
  std::optional<std::pair<std::string, int64_t>> bestFreeze;
  bool anyFreezeFits = false;
  for (const FreezeChoice &choice : freezeCandidates(memory, spec)) {
    std::vector<std::string> freeze = frozen;
    llvm::append_range(freeze, choice.groups);
    int64_t bytes = arenaAt(plan.microBatch, spec.train.seqLen, freeze);
    if (bytes < 0)
      continue;
    if (bytes <= arenaBudget) {
      anyFits = anyFreezeFits = true;
      os << llvm::formatv("  - freeze = [{0}] in [train]: {1}\n", choice.toml, formatBytes(bytes));
    } else if (!bestFreeze || bytes < bestFreeze->second) {
      bestFreeze = {choice.toml, bytes};
    }
  }
  if (bestFreeze && !anyFreezeFits)
    os << llvm::formatv("  - freeze = [{0}] helps most of the groups, to {1}, but not "
                        "enough alone\n",
                        bestFreeze->first, formatBytes(bestFreeze->second));
  if (!anyFits)
    os << "  none of these fits on its own: combine them, or give a larger --vram\n";
}

std::vector<int64_t> maxBatchSeqLens(int64_t maxPosition) {
  std::vector<int64_t> seqLens;
  for (int64_t seq : {64, 128, 256, 320, 384, 512})
    if (seq <= maxPosition)
      seqLens.push_back(seq);
  // Longer contexts (a decoder's): doubling from 1024.
  for (int64_t seq = 1024; seq <= maxPosition; seq *= 2)
    seqLens.push_back(seq);
  if (seqLens.empty() || seqLens.back() != maxPosition)
    seqLens.push_back(maxPosition);
  return seqLens;
}

void printMaxBatchTable(const JobSpec &spec, ArrayRef<int64_t> seqLens, int64_t arenaBudget,
                        const PipelineOptions &options, MLIRContext &ctx, raw_ostream &table,
                        raw_ostream &json) {
  // A micro-batch beyond this is never useful for fine-tuning and keeps searches short.
  constexpr int64_t kLimit = 4096;
  table << llvm::formatv("{0,8}  {1,15}  {2,12}\n", "seq_len", "max micro-batch", "arena");
  llvm::json::Array rows;
  for (int64_t seq : seqLens) {
    Fitting best = largestFittingMicroBatch(spec, seq, kLimit, arenaBudget, options, ctx);
    table << llvm::formatv("{0,8}  {1,15}  {2,12}\n", seq,
                           best.value == 0
                               ? std::string("none")
                               : (best.value == kLimit ? ">= " : "") + std::to_string(best.value),
                           best.value > 0 ? formatBytes(best.arenaBytes) : "-");
    rows.push_back(llvm::json::Object{
        {"seq_len", seq}, {"max_micro_batch", best.value}, {"arena_bytes", best.arenaBytes}});
  }
  json << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"arena_budget_bytes", arenaBudget},
                                     {"precision", options.precision},
                                     {"recompute", options.rematArenaBudget > 0 ? "auto" : "none"},
                                     {"rows", std::move(rows)}}))
       << "\n";
}

} // namespace bertc
