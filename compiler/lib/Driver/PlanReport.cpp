//===- PlanReport.cpp - what a plan costs, for machines and people --------===//

#include "bertc/Driver/PlanReport.h"

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Driver/ByteSize.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace bertc {

namespace {

int64_t regionBytes(DictionaryAttr plan, StringRef key) {
  auto region = dyn_cast_or_null<DenseI64ArrayAttr>(plan.get(key));
  return region && region.size() == 2 ? region[1] : 0;
}

int64_t planInteger(DictionaryAttr plan, StringRef key) {
  auto value = dyn_cast_or_null<IntegerAttr>(plan.get(key));
  return value ? value.getInt() : 0;
}

} // namespace

FailureOr<PlanSummary> summarizePlan(ModuleOp module, int64_t budgetBytes,
                                     int64_t reserveBytes) {
  auto plan = module->getAttrOfType<DictionaryAttr>("bert.plan");
  auto train = module->getAttrOfType<DictionaryAttr>("bert.train");
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (!plan || !train || failed(bounds))
    return module.emitError("module has no memory plan: run -bertc-plan-buffers");
  PlanSummary s;
  s.budgetBytes = budgetBytes;
  s.reserveBytes = reserveBytes;
  s.arenaBytes = planInteger(plan, "arena_bytes");
  s.lowerBoundBytes = planInteger(plan, "lower_bound_bytes");
  s.parameterBytes = regionBytes(plan, "parameters");
  s.gradientBytes = regionBytes(plan, "gradients");
  s.optimizerStateBytes = regionBytes(plan, "optimizer_state");
  s.workspaceBytes = regionBytes(plan, "scratch");
  s.activationBytes = regionBytes(plan, "inputs") + regionBytes(plan, "activations");
  s.microBatch = bounds->maxBatch;
  s.seqLen = bounds->maxSeq;
  auto batch = dyn_cast_or_null<IntegerAttr>(train.get("batch"));
  int64_t effective = batch ? batch.getInt() : s.microBatch;
  s.accumulationSteps = (effective + s.microBatch - 1) / s.microBatch;
  auto precision = dyn_cast_or_null<StringAttr>(train.get("precision"));
  // Every tensor is fp32 until mixed precision is planned.
  s.precision = precision && precision.getValue() != "auto" ? precision.str() : "fp32";
  return s;
}

void writePlanJson(const PlanSummary &s, raw_ostream &os) {
  llvm::json::Object categories{
      {"parameters", s.parameterBytes},
      {"master_weights", 0},
      {"gradients", s.gradientBytes},
      {"optimizer_state", s.optimizerStateBytes},
      {"activations", s.activationBytes},
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
  };
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(plan))) << "\n";
}

void printPlanSummary(const PlanSummary &s, raw_ostream &os) {
  os << llvm::formatv("  plan    micro-batch {0} x {1} step(s), seq {2}, {3}\n", s.microBatch,
                      s.accumulationSteps, s.seqLen, s.precision);
  os << llvm::formatv("  memory  {0} of {1} budget ({2} reserved for the process)\n",
                      formatBytes(s.peakBytes()), formatBytes(s.budgetBytes),
                      formatBytes(s.reserveBytes));
  os << llvm::formatv("          parameters {0}, gradients {1}, optimizer {2}, "
                      "activations {3}, workspace {4}\n",
                      formatBytes(s.parameterBytes), formatBytes(s.gradientBytes),
                      formatBytes(s.optimizerStateBytes), formatBytes(s.activationBytes),
                      formatBytes(s.workspaceBytes));
  os << llvm::formatv("  arena   {0} (never less than {1} live at once)\n",
                      formatBytes(s.arenaBytes), formatBytes(s.lowerBoundBytes));
}

} // namespace bertc
