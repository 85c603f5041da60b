//===- PlanReport.cpp - what a plan costs, for machines and people --------===//

#include "bertc/Driver/PlanReport.h"

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Driver/ByteSize.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace bertc {

FailureOr<PlanSummary> summarizePlan(ModuleOp module, const StepMemory &memory,
                                     int64_t budgetBytes, int64_t reserveBytes) {
  auto plan = module->getAttrOfType<DictionaryAttr>("bert.plan");
  auto train = module->getAttrOfType<DictionaryAttr>("bert.train");
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (!plan || !train || failed(bounds))
    return module.emitError("module has no memory plan: run -bertc-plan-buffers");
  PlanSummary s;
  s.budgetBytes = budgetBytes;
  s.reserveBytes = reserveBytes;
  s.arenaBytes = getPlanInteger(module, "arena_bytes");
  s.lowerBoundBytes = getPlanInteger(module, "lower_bound_bytes");
  s.parameterBytes = getPlanRegion(module, "parameters").bytes;
  s.gradientBytes = getPlanRegion(module, "gradients").bytes;
  s.optimizerStateBytes = getPlanRegion(module, "optimizer_state").bytes;
  s.workspaceBytes = getPlanRegion(module, "scratch").bytes;
  s.activationBytes = getPlanRegion(module, "inputs").bytes + memory.savedBytesAtPeak;
  s.temporaryBytes = s.arenaBytes - s.parameterBytes - s.gradientBytes -
                     s.optimizerStateBytes - s.workspaceBytes - s.activationBytes;
  s.microBatch = bounds->maxBatch;
  s.seqLen = bounds->maxSeq;
  s.accumulationSteps = accumulationSteps(module, *bounds);
  auto precision = dyn_cast_or_null<StringAttr>(train.get("precision"));
  // Every tensor is fp32 until mixed precision is planned.
  s.precision = precision && precision.getValue() != "auto" ? precision.str() : "fp32";
  StepCost cost = estimateStepCost(module, cpuDeviceModel());
  s.stepFlops = cost.flops;
  s.estimatedStepSeconds = cost.seconds;
  return s;
}

void writePlanJson(const PlanSummary &s, raw_ostream &os) {
  llvm::json::Object categories{
      {"parameters", s.parameterBytes},
      {"master_weights", s.masterWeightBytes},
      {"gradients", s.gradientBytes},
      {"optimizer_state", s.optimizerStateBytes},
      {"activations", s.activationBytes},
      {"temporaries", s.temporaryBytes},
      {"workspace", s.workspaceBytes},
      {"reserve", s.reserveBytes},
  };
  llvm::json::Object plan{
      {"budget_bytes", s.budgetBytes},
      {"arena_bytes", s.arenaBytes},
      {"lower_bound_bytes", s.lowerBoundBytes},
      {"peak_bytes", s.peakBytes()},
      {"categories", std::move(categories)},
      {"micro_batch", s.microBatch},
      {"accumulation_steps", s.accumulationSteps},
      {"seq_len", s.seqLen},
      {"precision", s.precision},
      {"recompute", llvm::json::Array{}},
      {"recompute_flops", 0},
      {"step_flops", s.stepFlops},
      {"estimated_step_seconds", s.estimatedStepSeconds},
  };
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(plan))) << "\n";
}

void printPlanSummary(const PlanSummary &s, raw_ostream &os) {
  os << llvm::formatv("  plan    micro-batch {0} x {1} step(s), seq {2}, {3}; "
                      "{4:F1} GFLOP per step, about {5:F2} s on {6}\n",
                      s.microBatch, s.accumulationSteps, s.seqLen, s.precision,
                      s.stepFlops / 1e9, s.estimatedStepSeconds, cpuDeviceModel().name);
  os << llvm::formatv("  memory  {0} of {1} budget ({2} reserved for the process)\n",
                      formatBytes(s.peakBytes()), formatBytes(s.budgetBytes),
                      formatBytes(s.reserveBytes));
  os << llvm::formatv("          parameters {0}, gradients {1}, optimizer {2}, "
                      "activations {3}, temporaries {4}, workspace {5}\n",
                      formatBytes(s.parameterBytes), formatBytes(s.gradientBytes),
                      formatBytes(s.optimizerStateBytes), formatBytes(s.activationBytes),
                      formatBytes(s.temporaryBytes), formatBytes(s.workspaceBytes));
  os << llvm::formatv("  arena   {0} (never less than {1} live at once)\n",
                      formatBytes(s.arenaBytes), formatBytes(s.lowerBoundBytes));
}

} // namespace bertc
