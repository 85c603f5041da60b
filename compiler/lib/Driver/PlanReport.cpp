//===- PlanReport.cpp - what a plan costs, for machines and people --------===//

#include "bertc/Driver/PlanReport.h"

#include "bert/Placement.h"
#include "bertc/Analysis/TrainModule.h"
#include "bertc/Driver/ByteSize.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace bertc {

FailureOr<PlanSummary> summarizePlan(ModuleOp module, const StepMemory &memory, int64_t budgetBytes,
                                     int64_t reserveBytes, const DeviceModel &device) {
  FailureOr<bert::PlanAttr> plan = getPlan(module);
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (failed(plan) || failed(bounds))
    return failure();
  PlanSummary s;
  s.budgetBytes = budgetBytes;
  s.reserveBytes = reserveBytes;
  s.arenaBytes = plan->getDeviceBytes();
  s.lowerBoundBytes = plan->getLowerBoundBytes();
  s.parameterBytes = plan->getParameters().bytes;
  s.gradientBytes = plan->getGradients().bytes;
  s.optimizerOnHost = optimizerOnHost(module);
  if (s.optimizerOnHost) {
    s.hostMasterWeightBytes = plan->getMasterWeights().bytes;
    s.hostOptimizerStateBytes = plan->getOptimizerState().bytes;
  } else {
    s.masterWeightBytes = plan->getMasterWeights().bytes;
    s.optimizerStateBytes = plan->getOptimizerState().bytes;
  }
  const bool hostCopies = device.target == bert::CostTarget::Cuda;
  s.offloadHostBytes = offloadHostBytes(*plan, hostCopies);
  s.offloadPinnedBytes = offloadPinnedBytes(*plan, hostCopies);
  s.hostFrozenMasterBytes = plan->getFrozenMasters().bytes;
  s.hostCheckpointBytes = plan->getHostActivations().bytes;
  s.hostTableBytes = plan->getHostParameters().bytes;
  // Kernel scratch (the CUDA kernels' row statistics included) and the GEMM library's.
  s.workspaceBytes = plan->getScratch().bytes + plan->getGemmWorkspace().bytes;
  s.activationBytes = plan->getInputs().bytes + memory.savedBytesAtPeak;
  s.temporaryBytes = s.arenaBytes - s.parameterBytes - s.masterWeightBytes - s.gradientBytes -
                     s.optimizerStateBytes - s.workspaceBytes - s.activationBytes;
  s.microBatch = bounds->maxBatch;
  s.seqLen = bounds->maxSeq;
  s.accumulationSteps = accumulationSteps(module, *bounds);
  // What -bertc-mixed-precision planned (a module planned without it is all fp32).
  auto precision = module->getAttrOfType<StringAttr>("bert.precision");
  s.precision = precision ? precision.str() : "fp32";
  s.optimizerState = eightBitStateBlocks(module).empty() ? "fp32" : "8bit";
  s.optimizerInBackward = !updatesInBackward(module).empty();
  s.tf32 = hasTf32Gemms(module);
  s.attentionHeadChunk = attentionHeadChunk(module);
  s.lmHeadTokenChunk = lmHeadTokenChunk(module);
  FailureOr<func::FuncOp> microStep = getMicroStep(module);
  if (succeeded(microStep)) {
    s.offloadedCheckpoints = llvm::range_size(microStep->getBody().getOps<bert::OffloadOp>());
    microStep->walk([&](bert::ParamOp param) {
      bool inHost = bert::valueInHostMemory(param);
      s.hostTables += inHost;
      s.movableTables += !inHost && isHostEmbeddingTable(param);
    });
  }
  if (module->hasAttr("bert.adapter_config") && succeeded(microStep))
    microStep->walk([&](bert::ParamOp param) {
      int64_t numel = param.getValueType().getNumElements();
      s.parameterCount += numel;
      s.trainableParameters += param.getTrainable() ? numel : 0;
      s.adaptedLayers += param.getName().ends_with(".lora_A.weight");
      if (bert::QuantizedWeightAttr quantized = param.getQuantizedAttr()) {
        s.quantizedFormat = bert::stringifyWeightFormat(quantized.getFormat()).str();
        ++s.quantizedWeights;
        s.quantizedBytes += quantized.getBytes();
      }
    });
  StepCost cost = estimateStepCost(module, device);
  s.device = device.name;
  s.stepFlops = cost.flops;
  s.estimatedStepSeconds = cost.seconds;
  s.hostStepSeconds = cost.hostSeconds;
  s.stepTime = std::move(cost.byOp);
  for (const OpTime &op : s.stepTime)
    if (op.op == bert::OffloadOp::getOperationName() || op.op == bert::ReloadOp::getOperationName())
      s.checkpointCopySeconds += op.seconds;
  if (auto recompute = module->getAttrOfType<ArrayAttr>("bert.recompute"))
    for (auto entry : recompute.getAsRange<DictionaryAttr>()) {
      RecomputedOp op;
      auto text = [&](StringRef key) {
        auto value = entry.getAs<StringAttr>(key);
        return value ? value.str() : std::string();
      };
      op.op = text("op");
      op.name = text("name");
      op.origin = text("origin");
      if (auto flops = entry.getAs<IntegerAttr>("flops"))
        op.flops = double(flops.getInt()) * double(s.accumulationSteps);
      s.recomputeFlops += op.flops;
      s.recompute.push_back(std::move(op));
    }
  return s;
}

void writePlanJson(const PlanSummary &s, raw_ostream &os) {
  llvm::json::Object categories{
      {"parameters", s.parameterBytes},   {"master_weights", s.masterWeightBytes},
      {"gradients", s.gradientBytes},     {"optimizer_state", s.optimizerStateBytes},
      {"activations", s.activationBytes}, {"temporaries", s.temporaryBytes},
      {"workspace", s.workspaceBytes},    {"reserve", s.reserveBytes},
  };
  llvm::json::Array recompute;
  for (const RecomputedOp &op : s.recompute)
    recompute.push_back(llvm::json::Object{
        {"op", op.op}, {"name", op.name}, {"origin", op.origin}, {"flops", op.flops}});
  llvm::json::Array stepTime;
  for (const OpTime &op : s.stepTime)
    stepTime.push_back(llvm::json::Object{{"op", op.op},
                                          {"runs", op.runs},
                                          {"launches", op.launches},
                                          {"flops", op.flops},
                                          {"seconds", op.seconds}});
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
      {"optimizer_state", s.optimizerState},
      {"optimizer_in_backward", s.optimizerInBackward},
      {"tf32", s.tf32},
      {"attention_head_chunk", s.attentionHeadChunk},
      {"optimizer_on_host", s.optimizerOnHost},
      {"host", llvm::json::Object{{"master_weights", s.hostMasterWeightBytes},
                                  {"optimizer_state", s.hostOptimizerStateBytes},
                                  {"frozen_master_weights", s.hostFrozenMasterBytes},
                                  {"checkpoints", s.hostCheckpointBytes},
                                  {"offloaded_checkpoints", s.offloadedCheckpoints},
                                  {"embedding_tables", s.hostTableBytes},
                                  {"bytes", s.offloadHostBytes},
                                  {"pinned_bytes", s.offloadPinnedBytes},
                                  {"host_ram_bytes", s.hostRamBytes},
                                  {"estimated_step_seconds", s.hostStepSeconds}}},
      {"recompute", std::move(recompute)},
      {"recompute_flops", s.recomputeFlops},
      {"step_flops", s.stepFlops},
      {"estimated_step_seconds", s.estimatedStepSeconds},
      {"estimated_for", s.device},
      {"step_time", std::move(stepTime)},
  };
  if (s.lmHeadTokenChunk > 0)
    plan["lm_head_token_chunk"] = s.lmHeadTokenChunk;
  if (s.adaptedLayers > 0) {
    llvm::json::Object lora{{"adapted_layers", s.adaptedLayers},
                            {"trainable_parameters", s.trainableParameters},
                            {"parameters", s.parameterCount}};
    if (s.quantizedWeights > 0)
      lora["quantized_base"] = llvm::json::Object{{"format", s.quantizedFormat},
                                                  {"weights", s.quantizedWeights},
                                                  {"bytes", s.quantizedBytes}};
    plan["lora"] = std::move(lora);
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(plan))) << "\n";
}

std::string attentionLabel(int64_t headChunk) {
  return headChunk > 0 ? llvm::formatv(", attention {0} heads at a time", headChunk).str() : "";
}

std::string lmHeadLabel(int64_t tokenChunk) {
  return tokenChunk > 0 ? llvm::formatv(", LM head {0} tokens at a time", tokenChunk).str() : "";
}

void printPlanSummary(const PlanSummary &s, raw_ostream &os) {
  os << llvm::formatv("  plan    micro-batch {0} x {1} step(s), seq {2}, {3}{7}{8}; "
                      "{4:F1} GFLOP per step, about {5:F2} s on {6}\n",
                      s.microBatch, s.accumulationSteps, s.seqLen, s.precisionLabel(),
                      s.stepFlops / 1e9, s.estimatedStepSeconds, s.device,
                      attentionLabel(s.attentionHeadChunk), lmHeadLabel(s.lmHeadTokenChunk));
  if (s.adaptedLayers > 0)
    os << llvm::formatv("  lora    adapters on {0} layers: {1} of {2} parameters train ({3:F2}%)\n",
                        s.adaptedLayers, s.trainableParameters, s.parameterCount,
                        100.0 * double(s.trainableParameters) / double(s.parameterCount));
  if (s.quantizedWeights > 0)
    os << llvm::formatv("          base: {0} weights in {1}, {2}\n", s.quantizedWeights,
                        s.quantizedFormat, formatBytes(s.quantizedBytes));
  os << llvm::formatv("  memory  {0} of {1} budget ({2} reserved for the process)\n",
                      formatBytes(s.peakBytes()), formatBytes(s.budgetBytes),
                      formatBytes(s.reserveBytes));
  std::string masters =
      s.masterWeightBytes ? ", master weights " + formatBytes(s.masterWeightBytes) : "";
  std::string optimizer = s.optimizerOnHost ? std::string("in host memory")
                                            : formatBytes(s.optimizerStateBytes) +
                                                  (s.optimizerState == "8bit" ? " (8-bit)" : "");
  os << llvm::formatv("          parameters {0}{6}, gradients {1}{7}, optimizer {2}, "
                      "activations {3}, temporaries {4}, workspace {5}\n",
                      formatBytes(s.parameterBytes), formatBytes(s.gradientBytes), optimizer,
                      formatBytes(s.activationBytes), formatBytes(s.temporaryBytes),
                      formatBytes(s.workspaceBytes), masters,
                      s.optimizerInBackward ? " (AdamW in the backward)" : "");
  os << llvm::formatv("  arena   {0} (never less than {1} live at once)\n",
                      formatBytes(s.arenaBytes), formatBytes(s.lowerBoundBytes));
  if (s.optimizerOnHost) {
    os << llvm::formatv("  host    optimizer in host memory: master weights {0}, optimizer {1}{2}",
                        formatBytes(s.hostMasterWeightBytes),
                        formatBytes(s.hostOptimizerStateBytes),
                        s.optimizerState == "8bit" ? " (8-bit)" : "");
    if (s.optimizerPinnedBytes() > 0)
      os << llvm::formatv("; {0} with the gradient and parameter copies, {1} of them pinned",
                          formatBytes(s.optimizerHostBytes()),
                          formatBytes(s.optimizerPinnedBytes()));
    // A CPU trainer's host AdamW reads the arena in place: no transfers.
    os << llvm::formatv(" (--host-ram {0}); AdamW{1} about {2:F2} s of the step\n",
                        formatBytes(s.hostRamBytes),
                        s.optimizerPinnedBytes() > 0 ? " and PCIe" : "", s.hostStepSeconds);
  }
  if (s.offloadedCheckpoints > 0)
    os << llvm::formatv(
        "  host    {0} checkpoint(s) in host memory between the forward and the "
        "backward: {1}{2}; their copies about {3:F3} s ({4:F1}% of the step)\n",
        s.offloadedCheckpoints, formatBytes(s.hostCheckpointBytes),
        s.offloadPinnedBytes > 0 ? " pinned" : "", s.checkpointCopySeconds,
        s.estimatedStepSeconds > 0 ? 100 * s.checkpointCopySeconds / s.estimatedStepSeconds : 0.0);
  if (s.hostTables > 0)
    os << llvm::formatv("  host    {0} embedding table(s) in host memory: {1}{2}; the gathers "
                        "read only the batch's rows\n",
                        s.hostTables, formatBytes(s.hostTableBytes),
                        s.offloadPinnedBytes > 0 ? " pinned and mapped" : "");
  if (s.hostFrozenMasterBytes > 0)
    os << llvm::formatv("  host    frozen parameters' fp32 masters {0} in host memory, for the "
                        "checkpoint; the steps read their {1} copies\n",
                        formatBytes(s.hostFrozenMasterBytes), s.precision);
  if (!s.recompute.empty())
    os << llvm::formatv("  remat   {0} op(s) recomputed in the backward: {1:F1} GFLOP per "
                        "step ({2:F1}% of the step)\n",
                        s.recompute.size(), s.recomputeFlops / 1e9,
                        s.stepFlops > 0 ? 100 * s.recomputeFlops / s.stepFlops : 0.0);
}

} // namespace bertc
