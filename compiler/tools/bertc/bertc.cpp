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
#include "bertc/Driver/PlanReport.h"
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

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.toml | stage.mlir>"),
                               cl::Required);
cl::opt<std::string> vram("vram",
                          cl::desc("VRAM budget for the whole trainer process, e.g. 6GB, "
                                   "6GiB, 6000MB (GB = 10^9 bytes, GiB = 2^30 bytes)"),
                          cl::value_desc("SIZE"));
cl::opt<std::string> reserve("reserve",
                             cl::desc("memory kept out of the plan for the process itself "
                                      "(default 0 for the cpu target)"),
                             cl::value_desc("SIZE"), cl::init("0"));
cl::opt<std::string> target("target", cl::desc("code to generate: cpu"), cl::init("cpu"));
cl::opt<std::string> outputDir("o", cl::desc("output directory (default: out)"),
                               cl::value_desc("DIR"), cl::init("out"));
cl::opt<EmitLevel> emitLevel(
    "emit", cl::desc("stop after a stage and print it to stdout"), cl::init(EmitLevel::Trainer),
    cl::values(clEnumValN(EmitLevel::Mlir, "mlir", "the forward graph"),
               clEnumValN(EmitLevel::MlirGrad, "mlir-grad", "with backward and optimizer"),
               clEnumValN(EmitLevel::MlirPlanned, "mlir-planned", "with the memory plan"),
               clEnumValN(EmitLevel::Cpp, "cpp", "the trainer's C++ source")));

int usageError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "bertc") << message << "\n";
  return kUsage;
}

/// The module described by the input: built from TOML, or parsed from MLIR.
OwningOpRef<ModuleOp> loadModule(MLIRContext &ctx, llvm::SourceMgr &sourceMgr) {
  if (llvm::StringRef(inputPath).ends_with(".mlir"))
    return parseSourceFile<ModuleOp>(inputPath, sourceMgr, &ctx);
  FailureOr<bertc::JobSpec> spec = bertc::parseJobFile(inputPath, ctx);
  if (failed(spec))
    return nullptr;
  return bertc::buildTrainGraph(*spec, spec->train.batch, ctx);
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

int reportOverBudget(const bertc::PlanSummary &plan) {
  llvm::WithColor::error(llvm::errs(), "bertc")
      << "the plan needs " << bertc::formatBytes(plan.peakBytes()) << " but --vram is "
      << bertc::formatBytes(plan.budgetBytes) << "\n";
  bertc::printPlanSummary(plan, llvm::errs());
  return kOverBudget;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "bertc: compiles a BERT fine-tuning job into a trainer that "
                              "fits a memory budget\n\n"
                              "  bertc model.toml --vram 6GB -o out/ && out/trainer\n");
  if (target != "cpu")
    return usageError("unknown --target '" + target + "' (this build generates: cpu)");
  bool needsBudget = emitLevel == EmitLevel::Cpp || emitLevel == EmitLevel::Trainer;
  std::optional<int64_t> budget = vram.empty() ? std::nullopt : bertc::parseByteSize(vram);
  if (needsBudget && vram.empty())
    return usageError("--vram SIZE is required (e.g. --vram 6GB)");
  if (!vram.empty() && !budget)
    return usageError("--vram '" + vram + "' is not a size (e.g. 6GB, 6GiB, 6000MB)");
  std::optional<int64_t> reserved = bertc::parseByteSize(reserve);
  if (!reserved)
    return usageError("--reserve '" + reserve + "' is not a size (e.g. 512MB)");

  MLIRContext ctx;
  ctx.loadDialect<bert::BertDialect, func::FuncDialect>();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = loadModule(ctx, sourceMgr);
  if (!module)
    return kInvalidInput;

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

  FailureOr<bertc::PlanSummary> plan = bertc::summarizePlan(*module, *budget, *reserved);
  if (failed(plan))
    return kInvalidInput;
  if (plan->peakBytes() > plan->budgetBytes)
    return reportOverBudget(*plan);
  if (emitLevel == EmitLevel::Cpp)
    return failed(bertc::emitCpuTrainer(*module, llvm::outs())) ? kInvalidInput : kOk;

  if (std::error_code error = llvm::sys::fs::create_directories(outputDir)) {
    llvm::WithColor::error(llvm::errs(), "bertc")
        << "cannot create " << outputDir << ": " << error.message() << "\n";
    return kInvalidInput;
  }
  std::string source, planJson, log;
  bool emitted = true;
  if (!writeOutput("trainer.cpp",
                   [&](llvm::raw_ostream &os) {
                     emitted = succeeded(bertc::emitCpuTrainer(*module, os));
                   },
                   source) ||
      !emitted ||
      !writeOutput("plan.json", [&](llvm::raw_ostream &os) { bertc::writePlanJson(*plan, os); },
                   planJson))
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
  return kOk;
}
