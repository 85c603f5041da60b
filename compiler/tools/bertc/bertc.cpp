//===- bertc.cpp - the bertc compiler driver ------------------------------===//
//
// bertc MODEL.toml --vram SIZE [-o DIR]: TOML -> bert IR -> autodiff -> optimizer ->
// memory plan -> trainer source -> OUTDIR/trainer, with OUTDIR/plan.json beside it.
// Any stage can be printed (-emit) and re-entered (an .mlir input).
//
// Exit codes: ExitCodes.h.
//
//===----------------------------------------------------------------------===//

#include "bert/BertDialect.h"
#include "bertc/Analysis/KernelWorkspace.h"
#include "bertc/Codegen/CudaTrainer.h"
#include "bertc/Driver/ByteSize.h"
#include "bertc/Driver/FitDriver.h"
#include "bertc/Driver/MemoryHtml.h"
#include "bertc/Driver/PlanExplain.h"
#include "bertc/Driver/PlanReport.h"
#include "bertc/Driver/PlanSearch.h"
#include "bertc/Driver/Precision.h"
#include "bertc/Transforms/Pipeline.h"
#include "bertc/frontend/GraphBuilder.h"
#include "bertc/frontend/TomlFrontend.h"

#include "AttentionFlags.h"
#include "ExitCodes.h"
#include "OptimizerFlags.h"
#include "RunChoice.h"
#include "TargetFlags.h"
#include "TrainerOutput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <limits>

using namespace mlir;
using bertc::bertcOptions;
using bertc::createOutputDir;
using bertc::cudaTarget;
using bertc::gemmWorkspaceBytes;
using bertc::kInvalidInput;
using bertc::kOk;
using bertc::kOverBudget;
using bertc::kUsage;
using bertc::precisionCandidates;
using bertc::targetArch;
using bertc::writeOutput;
namespace cl = llvm::cl;

namespace {

enum class EmitLevel { Mlir, MlirGrad, MlirPlanned, Cpp, Cuda, Plan, Trainer };

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.toml | stage.mlir>"), cl::Required,
                               cl::cat(bertcOptions()));
cl::opt<std::string> vram("vram",
                          cl::desc("VRAM budget for the whole trainer process, e.g. 6GB, "
                                   "6GiB, 6000MB (GB = 10^9 bytes, GiB = 2^30 bytes)"),
                          cl::value_desc("SIZE"), cl::cat(bertcOptions()));
cl::opt<std::string> reserve("reserve",
                             cl::desc("memory kept out of the plan for the process itself "
                                      "(default 512MiB for the CUDA targets, 640MiB for sm_90, 0 "
                                      "for cpu)"),
                             cl::value_desc("SIZE"), cl::cat(bertcOptions()));
cl::opt<bool> explain("explain",
                      cl::desc("say where the peak is and which tensors make it, with the "
                               "TOML line each comes from"),
                      cl::cat(bertcOptions()));
cl::opt<bool> maxBatch("max-batch",
                       cl::desc("print, for seq_len 64 to 512 and from 1024 doubling (up to "
                                "the model's max_position), the largest micro-batch that fits "
                                "--vram (also OUTDIR/max_batch.json); builds nothing"),
                       cl::cat(bertcOptions()));
cl::opt<bool> maxSeq("max-seq",
                     cl::desc("print the longest seq_len (up to the model's max_position) that "
                              "fits --vram at micro-batch 1; builds nothing"),
                     cl::cat(bertcOptions()));
cl::opt<bool> trustPlan("trust-plan",
                        cl::desc("build from a planned .mlir without re-checking its plan "
                                 "(-bertc-verify-budget), so that a trainer built with "
                                 "--plan-check meets a faulty plan at run time"),
                        cl::Hidden, cl::cat(bertcOptions()));
cl::opt<EmitLevel> emitLevel(
    "emit", cl::desc("stop after a stage and print it to stdout"), cl::init(EmitLevel::Trainer),
    cl::values(clEnumValN(EmitLevel::Mlir, "mlir", "the forward graph"),
               clEnumValN(EmitLevel::MlirGrad, "mlir-grad", "with backward and optimizer"),
               clEnumValN(EmitLevel::MlirPlanned, "mlir-planned", "with the memory plan"),
               clEnumValN(EmitLevel::Cpp, "cpp", "the trainer's C++ source"),
               clEnumValN(EmitLevel::Cuda, "cuda", "the CUDA trainer's trainer.cu"),
               clEnumValN(EmitLevel::Plan, "plan",
                          "OUTDIR/plan.json and memory.html and the summary, no trainer")),
    cl::cat(bertcOptions()));

int usageError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "bertc") << message << "\n";
  return kUsage;
}

bertc::Stage stageFor(EmitLevel level) {
  switch (level) {
  case EmitLevel::Mlir:
    return bertc::Stage::Forward;
  case EmitLevel::MlirGrad:
    return bertc::Stage::Train;
  default:
    return bertc::Stage::Planned;
  }
}

int reportOverBudget(const bertc::PlanSummary &plan, const bertc::StepMemory &memory,
                     const std::optional<bertc::JobSpec> &spec,
                     const bertc::PipelineOptions &options, MLIRContext &ctx) {
  llvm::WithColor::error(llvm::errs(), "bertc")
      << "the plan needs " << bertc::formatBytes(plan.peakBytes()) << " but --vram is "
      << bertc::formatBytes(plan.budgetBytes) << "\n";
  bertc::printPlanSummary(plan, llvm::errs());
  if (spec)
    bertc::printFitAdvice(*spec, plan, memory, plan.budgetBytes - plan.reserveBytes, options, ctx,
                          llvm::errs());
  return kOverBudget;
}

/// The options `--max-batch` and `--max-seq` plan with: a pinned flag as a compile takes
/// it, so that every answer agrees with one; where the fit driver would choose the
/// attention, the fused kernels, which need no [seq, seq] scores, and the LM head's
/// smallest token chunk.
bertc::PipelineOptions searchOptions(const bertc::JobSpec &spec, int64_t arenaBudget) {
  std::vector<int64_t> chunks = bertc::headChunkCandidates(spec.model.heads, cudaTarget());
  bertc::PipelineOptions options = {precisionCandidates(spec).front(),
                                    bertc::rematMode() == "auto" ? arenaBudget : 0,
                                    gemmWorkspaceBytes(),
                                    targetArch(),
                                    bertc::optimizerStateCandidates().front(),
                                    bertc::fuseOptimizerPinned(),
                                    cudaTarget() && bertc::offloadOptimizerPinned(),
                                    bertc::tf32Gemms(),
                                    chunks.size() == 1 ? chunks.front() : 0};
  options.lmHeadTokenChunk = bertc::lmHeadTokenChunkCandidates(spec).back();
  options.offloadCheckpoints =
      options.rematArenaBudget > 0 && bertc::targetOffloadCheckpointCandidates().back();
  options.hostEmbeddings = bertc::targetHostEmbeddingCandidates().back();
  options.hostRamBudget = bertc::hostRamBudget();
  return options;
}

/// What lives in host memory, with its verb: "the optimizer in host memory takes", "the
/// optimizer and the checkpoints in host memory take", ...
std::string hostResidents(const bertc::PlanSummary &plan) {
  std::vector<std::string> residents;
  if (plan.optimizerOnHost)
    residents.push_back("the optimizer");
  if (plan.offloadedCheckpoints > 0)
    residents.push_back("the checkpoints");
  if (plan.hostTables > 0)
    residents.push_back("the embedding tables");
  std::string text;
  for (size_t i = 0; i < residents.size(); ++i)
    text += (i == 0 ? "" : i + 1 == residents.size() ? " and " : ", ") + residents[i];
  return text + " in host memory " +
         (residents.size() == 1 && plan.optimizerOnHost ? "takes" : "take");
}

/// ", checkpoints in host memory (--host-ram 64.00 GB)" where `options` offloads them, the
/// frozen embedding tables, or both.
std::string offloadLabel(const bertc::PipelineOptions &options) {
  if (!options.offloadCheckpoints && !options.hostEmbeddings)
    return "";
  std::string what = options.offloadCheckpoints && options.hostEmbeddings
                         ? "checkpoints and frozen embedding tables"
                     : options.offloadCheckpoints ? "checkpoints"
                                                  : "frozen embedding tables";
  return ", " + what + " in host memory (--host-ram " + bertc::formatBytes(options.hostRamBudget) +
         ")";
}

/// `--max-seq`: the longest seq_len at micro-batch 1, checked by the plans either side.
int reportMaxSeq(const bertc::JobSpec &spec, int64_t arenaBudget, MLIRContext &ctx) {
  bertc::PipelineOptions options = searchOptions(spec, arenaBudget);
  bertc::Fitting best =
      bertc::largestFittingSeqLen(spec, 1, spec.model.maxPosition, arenaBudget, options, ctx);
  llvm::outs() << "bertc: longest seq_len at micro-batch 1 under "
               << bertc::formatBytes(arenaBudget) << " of arena (" << options.precision
               << ", recompute " << bertc::rematMode() << offloadLabel(options)
               << bertc::loraBaseLabel(spec.lora.base) << "): ";
  if (best.value == 0)
    llvm::outs() << "none (even 1 token does not fit)\n";
  else
    llvm::outs() << best.value << (best.value == spec.model.maxPosition ? " (max_position)" : "")
                 << ", arena " << bertc::formatBytes(best.arenaBytes) << "\n";
  return kOk;
}

/// `--max-batch`: the table on stdout, the JSON in OUTDIR/max_batch.json.
int reportMaxBatch(const bertc::JobSpec &spec, int64_t arenaBudget, MLIRContext &ctx) {
  if (!createOutputDir())
    return kInvalidInput;
  bertc::PipelineOptions options = searchOptions(spec, arenaBudget);
  std::string path;
  std::string table;
  llvm::raw_string_ostream tableStream(table);
  if (!writeOutput(
          "max_batch.json",
          [&](llvm::raw_ostream &json) {
            bertc::printMaxBatchTable(spec, bertc::maxBatchSeqLens(spec.model.maxPosition),
                                      arenaBudget, options, ctx, tableStream, json);
          },
          path))
    return kInvalidInput;
  llvm::outs() << "bertc: largest micro-batch under " << bertc::formatBytes(arenaBudget)
               << " of arena (" << options.precision << ", recompute " << bertc::rematMode()
               << offloadLabel(options) << bertc::loraBaseLabel(spec.lora.base) << ")";
  if (spec.model.maxPosition < 512)
    llvm::outs() << ", seq_len up to the model's max_position " << spec.model.maxPosition;
  llvm::outs() << "\n" << table << "  json    " << path << "\n";
  return kOk;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(bertcOptions());
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "bertc: compiles a BERT fine-tuning job into a trainer that "
                                   "fits a memory budget\n\n"
                                   "  bertc model.toml --vram 6GB -o out/ && out/trainer\n",
                                   &llvm::errs()))
    return kUsage;
  bertc::defaultTarget(emitLevel == EmitLevel::Cpp    ? std::optional<std::string>("cpu")
                       : emitLevel == EmitLevel::Cuda ? std::optional<std::string>("cuda")
                                                      : std::nullopt);
  if (std::optional<std::string> problem = bertc::targetFlagsError())
    return usageError(*problem);
  if (emitLevel == EmitLevel::Cuda && !cudaTarget())
    return usageError("-emit=cuda needs --target cuda or cuda-sim");
  if (emitLevel == EmitLevel::Cpp && cudaTarget())
    return usageError("-emit=cpp needs --target cpu");
  if (bertc::planChecksWanted() && cudaTarget())
    return usageError("--plan-check instruments the CPU target's trainer only (--target cpu)");
  if (std::optional<std::string> problem = bertc::optimizerFlagsError())
    return usageError(*problem);
  if (std::optional<std::string> problem = bertc::attentionFlagError())
    return usageError(*problem);
  if (std::optional<std::string> problem = bertc::runFlagsError())
    return usageError(*problem);
  bool needsBudget = emitLevel >= EmitLevel::Cpp;
  std::optional<int64_t> budget = vram.empty() ? std::nullopt : bertc::parseByteSize(vram);
  if (needsBudget && vram.empty())
    return usageError("--vram SIZE is required (e.g. --vram 6GB)");
  if (!vram.empty() && !budget)
    return usageError("--vram '" + vram + "' is not a size (e.g. 6GB, 6GiB, 6000MB)");
  std::optional<int64_t> reserved = bertc::parseByteSize(reserve);
  if (reserve.empty())
    reserved = cudaTarget() ? bertc::targetDeviceModel().processReserveBytes : 0;
  if (!reserved)
    return usageError("--reserve '" + reserve + "' is not a size (e.g. 512MB)");
  // The default reserve is the process's own memory: a budget under it cannot be met.
  if (budget && *reserved >= *budget && *reserved > 0 && reserve.empty()) {
    llvm::WithColor::error(llvm::errs(), "bertc")
        << "--vram " << bertc::formatBytes(*budget) << " leaves nothing for the trainer: the "
        << bertc::formatBytes(*reserved) << " the process itself takes (--reserve) is more\n";
    return kOverBudget;
  }
  if (budget && *reserved >= *budget)
    return usageError("--reserve " + bertc::formatBytes(*reserved) + " leaves nothing of --vram " +
                      bertc::formatBytes(*budget));

  MLIRContext ctx;
  ctx.loadDialect<bert::BertDialect, func::FuncDialect>();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);
  bertc::Stage wanted = stageFor(emitLevel);
  std::optional<bertc::JobSpec> spec;
  OwningOpRef<ModuleOp> module;
  bertc::RunChoice run{0, {}, {}};
  if (llvm::StringRef(inputPath).ends_with(".mlir")) {
    if (maxBatch || maxSeq)
      return usageError(std::string(maxBatch ? "--max-batch" : "--max-seq") +
                        " needs a .toml job, not an .mlir stage");
    if (bertc::pinnedMicroBatch())
      return usageError("--micro-batch needs a .toml job: an .mlir stage's micro-batch is the "
                        "one its IR was built for");
    if (bertc::targetOffloadCheckpointCandidates().back())
      return usageError("--offload-checkpoints needs a .toml job: an .mlir stage is planned "
                        "without the recomputation that chooses them");
    if (bertc::targetHostEmbeddingCandidates().back())
      return usageError("--offload-embeddings needs a .toml job: an .mlir stage may be planned "
                        "already");
    module = parseSourceFile<ModuleOp>(inputPath, sourceMgr, &ctx);
    // A stage before mixed precision takes the precision the flag names.
    if (std::optional<std::string> pinned = bertc::pinnedPrecision())
      run.options.precision = *pinned;
    run.options.arch = targetArch();
    run.options.gemmWorkspaceBytes = gemmWorkspaceBytes();
    run.options.optimizerState = bertc::optimizerStateCandidates().front();
    run.options.fuseOptimizer = bertc::fuseOptimizerCandidates().front();
    run.options.offloadOptimizer = bertc::targetOffloadOptimizerCandidates().front();
    run.options.offloadCheckpoints = bertc::targetOffloadCheckpointCandidates().front();
    run.options.hostRamBudget = bertc::hostRamBudget();
    run.options.tf32 = bertc::tf32Gemms();
    // -bertc-lower-to-target takes at most each op's heads.
    run.options.attentionHeadChunk =
        bertc::headChunkCandidates(std::numeric_limits<int64_t>::max(), cudaTarget()).front();
  } else {
    FailureOr<bertc::JobSpec> parsed = bertc::parseJobFile(inputPath, ctx);
    if (failed(parsed))
      return kInvalidInput;
    spec = std::move(*parsed);
    if (std::optional<std::string> problem = bertc::precisionError(*spec))
      return usageError(*problem);
    std::optional<int64_t> pinnedMicroBatch = bertc::pinnedMicroBatch();
    if (std::optional<std::string> problem =
            pinnedMicroBatch ? bertc::microBatchError(*pinnedMicroBatch, spec->train.batch)
                             : std::nullopt)
      return usageError(*problem);
    if (std::optional<std::string> problem =
            bertc::fuseOptimizerPinned()
                ? bertc::fuseOptimizerError(*spec, pinnedMicroBatch.value_or(spec->train.batch),
                                            precisionCandidates(*spec).front())
                : std::nullopt)
      return usageError("--fuse-optimizer on: " + *problem);
    if ((maxBatch || maxSeq) && !budget)
      return usageError(std::string(maxBatch ? "--max-batch" : "--max-seq") +
                        " needs --vram SIZE (e.g. --vram 6GB)");
    // The limits hold for the smallest LoRA base the fit driver may choose.
    bertc::JobSpec smallest = *spec;
    smallest.lora.base = spec->lora.baseCandidates().back();
    if (maxBatch)
      return reportMaxBatch(smallest, *budget - *reserved, ctx);
    if (maxSeq)
      return reportMaxSeq(smallest, *budget - *reserved, ctx);
    bool fitting = wanted == bertc::Stage::Planned && budget;
    run = bertc::chooseRun(*spec, fitting ? std::optional(*budget - *reserved) : std::nullopt, ctx);
    spec->lora.base = run.loraBase;
    module = bertc::buildTrainGraph(*spec, run.microBatch, ctx);
  }
  if (!module)
    return kInvalidInput;

  PassManager pm(&ctx);
  bertc::Stage reached = bertc::stageOf(*module);
  if (reached < wanted || (reached == bertc::Stage::Planned && !trustPlan))
    bertc::buildPipeline(pm, reached, wanted, run.options);
  if (failed(pm.run(*module)))
    return kInvalidInput;
  // A stage printed with plan checks (--plan-check -emit=mlir-planned) builds a trainer
  // with them, as --plan-check does.
  if (bert::hasPlanChecks(*module))
    bertc::wantPlanChecks();
  if (wanted != bertc::Stage::Planned) {
    module->print(llvm::outs());
    return kOk;
  }
  // The plan's analyses read the step's own ops; addInstrumentation puts the checks back.
  bert::erasePlanChecks(*module);
  auto printPlannedStage = [&] {
    if (failed(bertc::addInstrumentation(*module)))
      return kInvalidInput;
    module->print(llvm::outs());
    return kOk;
  };

  FailureOr<bertc::StepMemory> memory = bertc::analyzeStepMemory(*module);
  if (failed(memory))
    return kInvalidInput;
  if (emitLevel == EmitLevel::MlirPlanned && !budget)
    return printPlannedStage(); // no --vram to check it against
  FailureOr<bertc::PlanSummary> plan =
      bertc::summarizePlan(*module, *memory, *budget, *reserved, bertc::targetDeviceModel());
  if (failed(plan))
    return kInvalidInput;
  // The summary names the host memory what is offloaded may take, over budget too.
  if (plan->offloadHostBytes > 0)
    plan->hostRamBytes = bertc::hostRamBudget();
  if (plan->peakBytes() > plan->budgetBytes)
    return reportOverBudget(*plan, *memory, spec, run.options, ctx);
  if (emitLevel == EmitLevel::MlirPlanned)
    return printPlannedStage();
  if (bertc::hostEmbeddingsRequired() && plan->hostTables == 0) {
    llvm::WithColor::error(llvm::errs(), "bertc")
        << "--offload-embeddings: the model has no frozen embedding table that only gathers "
           "read (a table that trains, or that the LM head shares, stays on the device)\n";
    return kInvalidInput;
  }
  if (plan->offloadHostBytes > 0) {
    if (plan->offloadHostBytes > plan->hostRamBytes) {
      llvm::WithColor::error(llvm::errs(), "bertc")
          << hostResidents(*plan) << " " << bertc::formatBytes(plan->offloadHostBytes)
          << " but --host-ram is " << bertc::formatBytes(plan->hostRamBytes) << "\n";
      bertc::printPlanSummary(*plan, llvm::errs());
      return kOverBudget;
    }
  }
  // A job's [data] settings become the trainer's defaults; an .mlir input has none.
  bertc::JobDataSettings data = spec ? bertc::jobDataSettings(*spec) : bertc::JobDataSettings{};
  if (emitLevel == EmitLevel::Cpp)
    return bertc::emitCppSource(*module, data, inputPath);
  if (emitLevel == EmitLevel::Cuda)
    return failed(bertc::addInstrumentation(*module)) ||
                   failed(bertc::emitCudaTrainer(*module, data, llvm::outs()))
               ? kInvalidInput
               : kOk;

  if (!createOutputDir())
    return kInvalidInput;
  std::string planJson, memoryPage;
  if (!writeOutput(
          "plan.json", [&](llvm::raw_ostream &os) { bertc::writePlanJson(*plan, os); }, planJson) ||
      !writeOutput(
          "memory.html",
          [&](llvm::raw_ostream &os) {
            os << bertc::renderMemoryHtml(
                bertc::buildMemoryPicture(*module, *memory, *plan, inputPath));
          },
          memoryPage))
    return kInvalidInput;

  if (emitLevel == EmitLevel::Plan) {
    llvm::outs() << "bertc: " << inputPath << " planned (-emit=plan: no trainer built)\n";
  } else if (int status = bertc::writeTrainer(*module, data, plan->budgetBytes, inputPath);
             status != kOk) {
    return status;
  }
  bertc::printPlanSummary(*plan, llvm::outs());
  bertc::printFitChoice(run.ranked, bertc::targetDeviceModel(), llvm::outs());
  bertc::printArchNote(llvm::outs());
  llvm::outs() << "  report  " << memoryPage << ", " << planJson << "\n";
  if (explain)
    bertc::printExplanation(*memory, *plan, 12, llvm::outs());
  return kOk;
}
