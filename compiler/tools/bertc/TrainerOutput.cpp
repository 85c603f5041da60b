//===- TrainerOutput.cpp - what bertc writes into OUTDIR ------------------===//

#include "TrainerOutput.h"

#include "ExitCodes.h"
#include "OptimizerFlags.h"
#include "TargetFlags.h"

#include "bertc/Analysis/TrainModule.h"
#include "bertc/Codegen/CpuTrainer.h"
#include "bertc/Codegen/CudaTrainer.h"
#include "bertc/Driver/TrainerBuild.h"
#include "bertc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace bertc {

namespace {

cl::opt<std::string> outputDir("o", cl::desc("output directory (default: out)"),
                               cl::value_desc("DIR"), cl::init("out"), cl::cat(bertcOptions()));
cl::opt<bool> planCheck("plan-check",
                        cl::desc("build a CPU trainer whose steps can check the memory plan as "
                                 "they run (the trainer's --plan-check turns the checks on)"),
                        cl::cat(bertcOptions()));
cl::opt<bool> timeOps("time-ops",
                      cl::desc("build a trainer that times each op of its steps and prints, at "
                               "the end of its run, where a step's time went, beside "
                               "plan.json's estimate (on cuda without CUDA graphs)"),
                      cl::cat(bertcOptions()));
cl::opt<std::string> cxxflags("cxxflags",
                              cl::desc("flags for the host compiler that builds the trainer, "
                                       "after BERTC_TRAINER_CXXFLAGS (e.g. "
                                       "\"-fsanitize=address,undefined\")"),
                              cl::value_desc("FLAGS"), cl::cat(bertcOptions()));

/// Writes the trainer's source OUTDIR/name as `emit` gives it; false where either fails.
bool writeSource(llvm::StringRef name, llvm::function_ref<LogicalResult(llvm::raw_ostream &)> emit,
                 std::string &path) {
  bool emitted = true;
  return writeOutput(
             name, [&](llvm::raw_ostream &os) { emitted = succeeded(emit(os)); }, path) &&
         emitted;
}

} // namespace

bool planChecksWanted() { return planCheck; }

void wantPlanChecks() { planCheck = true; }

bool createOutputDir() {
  if (std::error_code error = llvm::sys::fs::create_directories(outputDir)) {
    llvm::WithColor::error(llvm::errs(), "bertc")
        << "cannot create " << outputDir << ": " << error.message() << "\n";
    return false;
  }
  return true;
}

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
  os.close();
  if (os.has_error()) {
    llvm::WithColor::error(llvm::errs(), "bertc")
        << "cannot write " << path << ": " << os.error().message() << "\n";
    os.clear_error();
    return false;
  }
  return true;
}

LogicalResult addInstrumentation(ModuleOp module) {
  if (timeOps)
    module->setAttr(kTimeOps, UnitAttr::get(module.getContext()));
  if (!planCheck)
    return success();
  PassManager pm(module.getContext());
  pm.addPass(createInstrumentPlanChecks());
  return pm.run(module);
}

int emitCppSource(ModuleOp module, const JobDataSettings &data, llvm::StringRef inputPath) {
  if (failed(addInstrumentation(module)))
    return kInvalidInput;
  if (outputDir.getNumOccurrences() == 0)
    return failed(emitCpuTrainer(module, data, llvm::outs())) ? kInvalidInput : kOk;
  std::string source;
  if (!createOutputDir() ||
      !writeSource(
          "trainer.cpp", [&](llvm::raw_ostream &os) { return emitCpuTrainer(module, data, os); },
          source))
    return kInvalidInput;
  llvm::outs() << "bertc: " << inputPath << " -> " << source << " (-emit=cpp: no trainer built)\n";
  return kOk;
}

int writeTrainer(ModuleOp module, const JobDataSettings &data, int64_t budget,
                 llvm::StringRef inputPath) {
  bool cuda = cudaTarget();
  if (failed(addInstrumentation(module)))
    return kInvalidInput;
  std::string source;
  if (!writeSource(
          cuda ? "trainer.cu" : "trainer.cpp",
          [&](llvm::raw_ostream &os) {
            return cuda ? emitCudaTrainer(module, data, os) : emitCpuTrainer(module, data, os);
          },
          source))
    return kInvalidInput;
  llvm::SmallString<256> trainer(outputDir), object(outputDir), buildLog(outputDir),
      simulatedDevice(outputDir);
  llvm::sys::path::append(trainer, "trainer");
  llvm::sys::path::append(object, "trainer.o");
  llvm::sys::path::append(buildLog, "build.log");
  llvm::sys::path::append(simulatedDevice, "simulated_device.cpp");
  std::vector<std::string> flags = trainerCxxFlags(cxxflags);
  // An earlier job's trainer goes first, so that a failed build leaves none beside this
  // job's plan.
  llvm::sys::fs::remove(trainer);
  llvm::Error error = targetName() == "cuda-sim"
                          ? buildSimulatedCudaTrainer(source, targetArch(), budget, simulatedDevice,
                                                      object, trainer, buildLog, flags)
                      : cuda
                          ? buildCudaTrainer(source, targetArch(), object, trainer, buildLog, flags)
                          : buildCpuTrainer(source, trainer, buildLog, flags);
  if (error) {
    llvm::WithColor::error(llvm::errs(), "bertc") << llvm::toString(std::move(error)) << "\n";
    return kBuildFailed;
  }
  llvm::outs() << "bertc: " << inputPath << " -> " << trainer << " (target " << targetName()
               << (cuda ? ", " + targetArch() : "") << ")\n";
  // The cuda target is the default wherever nvcc is, GPU or not: say where it can run.
  if (targetName() == "cuda" && !llvm::sys::fs::exists("/dev/nvidiactl"))
    llvm::outs() << "bertc: note: this machine has no NVIDIA driver (/dev/nvidiactl), so the "
                    "trainer runs only where there is one; --target cpu builds one for here\n";
  return kOk;
}

} // namespace bertc
