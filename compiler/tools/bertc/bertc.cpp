//===- bertc.cpp - the bertc compiler driver ------------------------------===//
//
// bertc MODEL.toml --vram SIZE [-o DIR]: TOML -> bert IR -> autodiff -> optimizer ->
// memory plan -> trainer source -> OUTDIR/trainer, with OUTDIR/plan.json beside it.
// Any stage can be printed (-emit) and re-entered (an .mlir input).
//
// Exit codes: 0 ok, 1 invalid input, 2 usage, 3 budget cannot be met, 4 trainer build.
//
//===----------------------------------------------------------------------===//

#include "bert/BertDialect.h"
#include "bertc/Codegen/CpuTrainer.h"
#include "bertc/Driver/ByteSize.h"
#include "bertc/Driver/MemoryHtml.h"
#include "bertc/Driver/PlanExplain.h"
#include "bertc/Driver/PlanReport.h"
#include "bertc/Driver/PlanSearch.h"
#include "bertc/Driver/TrainerBuild.h"
#include "bertc/Pipeline.h"
#include "bertc/frontend/GraphBuilder.h"
#include "bertc/frontend/TomlFrontend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum ExitCode { kOk = 0, kInvalidInput = 1, kUsage = 2, kOverBudget = 3, kBuildFailed = 4 };

enum class EmitLevel { Mlir, MlirGrad, MlirPlanned, Cpp, Trainer };

cl::OptionCategory bertcOptions("bertc options");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.toml | stage.mlir>"),
                               cl::Required, cl::cat(bertcOptions));
cl::opt<std::string> vram("vram",
                          cl::desc("VRAM budget for the whole trainer process, e.g. 6GB, "
                                   "6GiB, 6000MB (GB = 10^9 bytes, GiB = 2^30 bytes)"),
                          cl::value_desc("SIZE"), cl::cat(bertcOptions));
cl::opt<std::string> reserve("reserve",
                             cl::desc("memory kept out of the plan for the process itself "
                                      "(default 0 for the cpu target)"),
                             cl::value_desc("SIZE"), cl::init("0"), cl::cat(bertcOptions));
cl::opt<std::string> target("target", cl::desc("code to generate: cpu"), cl::init("cpu"),
                            cl::cat(bertcOptions));
cl::opt<std::string> outputDir("o", cl::desc("output directory (default: out)"),
                               cl::value_desc("DIR"), cl::init("out"), cl::cat(bertcOptions));
cl::opt<int64_t> microBatch("micro-batch",
                            cl::desc("rows per micro-step; the effective batch is reached by "
                                     "gradient accumulation (default: the whole batch)"),
                            cl::value_desc("N"), cl::init(0), cl::cat(bertcOptions));
cl::opt<bool> explain("explain",
                      cl::desc("say where the peak is and which tensors make it, with the "
                               "TOML line each comes from"),
                      cl::cat(bertcOptions));
cl::opt<bool> maxBatch("max-batch",
                       cl::desc("print, for seq_len 64 to 512, the largest micro-batch that "
                                "fits --vram (also OUTDIR/max_batch.json); builds nothing"),
                       cl::cat(bertcOptions));
cl::opt<std::string> precision("precision",
                               cl::desc("storage precision to plan for: fp32 (this bertc "
                                        "plans fp32 only)"),
                               cl::init("fp32"), cl::cat(bertcOptions));
cl::opt<std::string> remat("remat",
                           cl::desc("recomputation: none (this bertc keeps every "
                                    "activation)"),
                           cl::init("none"), cl::cat(bertcOptions));
cl::opt<EmitLevel> emitLevel(
    "emit", cl::desc("stop after a stage and print it to stdout"), cl::init(EmitLevel::Trainer),
    cl::values(clEnumValN(EmitLevel::Mlir, "mlir", "the forward graph"),
               clEnumValN(EmitLevel::MlirGrad, "mlir-grad", "with backward and optimizer"),
               clEnumValN(EmitLevel::MlirPlanned, "mlir-planned", "with the memory plan"),
               clEnumValN(EmitLevel::Cpp, "cpp", "the trainer's C++ source")),
    cl::cat(bertcOptions));

int usageError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "bertc") << message << "\n";
  return kUsage;
}

/// The module described by the input: built from TOML (whose spec is kept in `spec`),
/// or parsed from MLIR.
OwningOpRef<ModuleOp> loadModule(MLIRContext &ctx, llvm::SourceMgr &sourceMgr,
                                 std::optional<bertc::JobSpec> &spec) {
  if (llvm::StringRef(inputPath).ends_with(".mlir"))
    return parseSourceFile<ModuleOp>(inputPath, sourceMgr, &ctx);
  FailureOr<bertc::JobSpec> parsed = bertc::parseJobFile(inputPath, ctx);
  if (failed(parsed))
    return nullptr;
  spec = std::move(*parsed);
  int64_t rows = microBatch > 0 ? std::min<int64_t>(microBatch, spec->train.batch)
                                : spec->train.batch;
  return bertc::buildTrainGraph(*spec, rows, ctx);
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

/// Creates OUTDIR, or reports why it could not.
bool createOutputDir() {
  if (std::error_code error = llvm::sys::fs::create_directories(outputDir)) {
    llvm::WithColor::error(llvm::errs(), "bertc")
        << "cannot create " << outputDir << ": " << error.message() << "\n";
    return false;
  }
  return true;
}

/// Writes `text` to OUTDIR/name, or reports why it could not.
bool writeOutput(llvm::StringRef name, llvm::function_ref<void(llvm::raw_ostream &)> write,
                 std::string &path) {
  llvm::SmallString<256> file(outputDir);
  llvm::sys::path::append(file, name);
  path = file.str().str();
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error) {
    llvm::WithColor::error(llvm::errs(), "bertc")
        << "cannot write " << path << ": " << error.message() << "\n";
    return false;
  }
  write(os);
  return true;
}

int reportOverBudget(const bertc::PlanSummary &plan, const bertc::StepMemory &memory,
                     const std::optional<bertc::JobSpec> &spec, MLIRContext &ctx) {
  llvm::WithColor::error(llvm::errs(), "bertc")
      << "the plan needs " << bertc::formatBytes(plan.peakBytes()) << " but --vram is "
      << bertc::formatBytes(plan.budgetBytes) << "\n";
  bertc::printPlanSummary(plan, llvm::errs());
  if (spec)
    bertc::printFitAdvice(*spec, plan, memory, plan.budgetBytes - plan.reserveBytes, ctx,
                          llvm::errs());
  return kOverBudget;
}

/// `--max-batch`: the table on stdout, the JSON in OUTDIR/max_batch.json.
int reportMaxBatch(const bertc::JobSpec &spec, int64_t arenaBudget, MLIRContext &ctx) {
  if (!createOutputDir())
    return kInvalidInput;
  std::string path;
  std::string table;
  llvm::raw_string_ostream tableStream(table);
  if (!writeOutput("max_batch.json",
                   [&](llvm::raw_ostream &json) {
                     bertc::printMaxBatchTable(spec, {64, 128, 256, 320, 384, 512},
                                               arenaBudget, ctx, tableStream, json);
                   },
                   path))
    return kInvalidInput;
  llvm::outs() << "bertc: largest micro-batch under " << bertc::formatBytes(arenaBudget)
               << " of arena (" << precision << ", recompute " << remat << ")\n"
               << table << "  json    " << path << "\n";
  return kOk;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(bertcOptions);
  cl::ParseCommandLineOptions(argc, argv,
                              "bertc: compiles a BERT fine-tuning job into a trainer that "
                              "fits a memory budget\n\n"
                              "  bertc model.toml --vram 6GB -o out/ && out/trainer\n");
  if (target != "cpu")
    return usageError("unknown --target '" + target + "' (this build generates: cpu)");
  if (precision != "fp32")
    return usageError("--precision '" + precision + "': this bertc plans fp32 only");
  if (remat != "none")
    return usageError("--remat '" + remat + "': this bertc keeps every activation (none)");
  if (microBatch < 0)
    return usageError("--micro-batch must be at least 1");
  bool needsBudget = emitLevel == EmitLevel::Cpp || emitLevel == EmitLevel::Trainer;
  std::optional<int64_t> budget = vram.empty() ? std::nullopt : bertc::parseByteSize(vram);
  if (needsBudget && vram.empty())
    return usageError("--vram SIZE is required (e.g. --vram 6GB)");
  if (!vram.empty() && !budget)
    return usageError("--vram '" + vram + "' is not a size (e.g. 6GB, 6GiB, 6000MB)");
  std::optional<int64_t> reserved = bertc::parseByteSize(reserve);
  if (!reserved)
    return usageError("--reserve '" + reserve + "' is not a size (e.g. 512MB)");
  if (budget && *reserved >= *budget)
    return usageError("--reserve " + bertc::formatBytes(*reserved) +
                      " leaves nothing of --vram " + bertc::formatBytes(*budget));

  MLIRContext ctx;
  ctx.loadDialect<bert::BertDialect, func::FuncDialect>();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);
  std::optional<bertc::JobSpec> spec;
  OwningOpRef<ModuleOp> module = loadModule(ctx, sourceMgr, spec);
  if (!module)
    return kInvalidInput;
  if (maxBatch) {
    if (!spec)
      return usageError("--max-batch needs a .toml job, not an .mlir stage");
    return reportMaxBatch(*spec, *budget - *reserved, ctx);
  }

  PassManager pm(&ctx);
  bertc::Stage reached = bertc::stageOf(*module);
  bertc::Stage wanted = stageFor(emitLevel);
  if (reached < wanted)
    bertc::buildPipeline(pm, reached, wanted);
  if (failed(pm.run(*module)))
    return kInvalidInput;
  if (wanted != bertc::Stage::Planned || emitLevel == EmitLevel::MlirPlanned) {
    module->print(llvm::outs());
    return kOk;
  }

  FailureOr<bertc::StepMemory> memory = bertc::analyzeStepMemory(*module);
  if (failed(memory))
    return kInvalidInput;
  FailureOr<bertc::PlanSummary> plan =
      bertc::summarizePlan(*module, *memory, *budget, *reserved);
  if (failed(plan))
    return kInvalidInput;
  if (plan->peakBytes() > plan->budgetBytes)
    return reportOverBudget(*plan, *memory, spec, ctx);
  if (emitLevel == EmitLevel::Cpp)
    return failed(bertc::emitCpuTrainer(*module, llvm::outs())) ? kInvalidInput : kOk;

  if (!createOutputDir())
    return kInvalidInput;
  std::string source, planJson, memoryPage;
  bool emitted = true;
  if (!writeOutput("trainer.cpp",
                   [&](llvm::raw_ostream &os) {
                     emitted = succeeded(bertc::emitCpuTrainer(*module, os));
                   },
                   source) ||
      !emitted ||
      !writeOutput("plan.json", [&](llvm::raw_ostream &os) { bertc::writePlanJson(*plan, os); },
                   planJson) ||
      !writeOutput("memory.html",
                   [&](llvm::raw_ostream &os) {
                     os << bertc::renderMemoryHtml(
                         bertc::buildMemoryPicture(*module, *memory, *plan, inputPath));
                   },
                   memoryPage))
    return kInvalidInput;

  llvm::SmallString<256> trainer(outputDir), buildLog(outputDir);
  llvm::sys::path::append(trainer, "trainer");
  llvm::sys::path::append(buildLog, "build.log");
  if (llvm::Error error = bertc::buildCpuTrainer(source, trainer, buildLog)) {
    llvm::WithColor::error(llvm::errs(), "bertc") << llvm::toString(std::move(error)) << "\n";
    return kBuildFailed;
  }
  llvm::outs() << "bertc: " << inputPath << " -> " << trainer << " (target cpu)\n";
  bertc::printPlanSummary(*plan, llvm::outs());
  llvm::outs() << "  report  " << memoryPage << ", " << planJson << "\n";
  if (explain)
    bertc::printExplanation(*memory, *plan, 12, llvm::outs());
  return kOk;
}
