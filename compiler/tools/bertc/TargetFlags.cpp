//===- TargetFlags.cpp - what bertc plans and builds for ------------------===//

#include "TargetFlags.h"

#include "LocalGpu.h"
#include "OptimizerFlags.h"

#include "bertc/Analysis/DeviceModel.h"
#include "bertc/Analysis/KernelWorkspace.h"
#include "bertc/Driver/Precision.h"
#include "bertc/Driver/TrainerBuild.h"
#include "bertc/frontend/JobSpec.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"

#include <cstdlib>

namespace cl = llvm::cl;

namespace bertc {

namespace {

cl::opt<std::string> target("target",
                            cl::desc("code to generate: cpu, cuda, or cuda-sim (the cuda "
                                     "trainer on a simulated GPU, run on the CPU); default "
                                     "cuda when this bertc was built with nvcc, else cpu; "
                                     "-emit=cpp and -emit=cuda imply theirs)"),
                            cl::cat(bertcOptions()));
cl::opt<std::string> arch("arch",
                          cl::desc("GPU generation to plan for: sm_75, sm_80, sm_86, sm_89, "
                                   "sm_90 (picks the 16-bit precision and the speeds the "
                                   "plan is estimated at); default for the cuda targets: "
                                   "$BERTC_ARCH, else with --target cuda this machine's GPU "
                                   "(nvidia-smi), else sm_80"),
                          cl::value_desc("SM"), cl::cat(bertcOptions()));
cl::opt<std::string> precision("precision",
                               cl::desc("storage precision: auto (the job's [train] "
                                        "precision, else the --arch's 16-bit one, else "
                                        "fp32), fp32, bf16 or fp16"),
                               cl::init("auto"), cl::cat(bertcOptions()));
cl::opt<bool> tf32("tf32",
                   cl::desc("run fp32 GEMMs on TF32 tensor cores (cuBLASLt's "
                            "CUBLAS_COMPUTE_32F_FAST_TF32: operands rounded to 10 mantissa "
                            "bits, fp32 accumulation); cuda targets, sm_80 and newer; no "
                            "effect on bf16/fp16 plans"),
                   cl::cat(bertcOptions()));

/// The cuda targets' --arch when none is given, and why.
struct ArchDefault {
  std::string arch;
  std::string origin;       ///< where it came from, for messages
  std::string localGpuNote; ///< where this machine's GPU decided it, the summary's line
  std::string error;        ///< a BERTC_ARCH that names no arch
};

std::string capabilityText(int capability) {
  return std::to_string(capability / 10) + "." + std::to_string(capability % 10);
}

/// BERTC_ARCH, else with --target cuda this machine's GPU (nvidia-smi), else sm_80. Read
/// once --target is known.
const ArchDefault &archDefault() {
  static const ArchDefault chosen = []() -> ArchDefault {
    const char *variable = std::getenv("BERTC_ARCH");
    if (variable && *variable) {
      if (!gpuDeviceModel(variable))
        return {"sm_80", "", "",
                "BERTC_ARCH='" + std::string(variable) +
                    "' is not an --arch (known: " + knownArchs().str() + ")"};
      return {variable, "BERTC_ARCH=" + std::string(variable), "", ""};
    }
    std::optional<LocalGpu> gpu = target == "cuda" ? localGpu() : std::nullopt;
    if (!gpu)
      return {"sm_80", "sm_80 (the default --arch)", "", ""};
    const std::string about =
        gpu->name + " (compute capability " + capabilityText(gpu->capability) +
        (gpu->gpus > 1 ? "; the oldest of its " + std::to_string(gpu->gpus) + " GPUs" : "") + ")";
    if (std::optional<std::string> local = archForCapability(gpu->capability))
      return {*local, *local + ", for this machine's " + about,
              *local + ", for this machine's " + about +
                  "; --arch or BERTC_ARCH plans for another GPU",
              ""};
    return {"sm_80", "sm_80 (the default --arch)",
            "sm_80 (the default): this machine's " + about +
                " is older than any GPU bertc's CUDA trainers run on; --target cpu builds a "
                "trainer for it",
            ""};
  }();
  return chosen;
}

} // namespace

void defaultTarget(std::optional<std::string> implied) {
  if (!target.empty())
    return;
  target = implied ? *implied : cudaTargetAvailable() ? "cuda" : "cpu";
}

const std::string &targetName() { return target.getValue(); }

bool cudaTarget() { return target == "cuda" || target == "cuda-sim"; }

std::string targetArch() {
  return arch.empty() && cudaTarget() ? archDefault().arch : arch.getValue();
}

namespace {
/// Where targetArch() came from, for messages: "--arch sm_75", "BERTC_ARCH=sm_75", ...
std::string targetArchOrigin() {
  return arch.empty() && cudaTarget() ? archDefault().origin : "--arch " + arch;
}
} // namespace

void printArchNote(llvm::raw_ostream &os) {
  if (arch.empty() && cudaTarget() && !archDefault().localGpuNote.empty())
    os << "  arch    " << archDefault().localGpuNote << "\n";
}

const DeviceModel &targetDeviceModel() { return deviceModel(targetArch()); }

int64_t gemmWorkspaceBytes() { return cudaTarget() ? kCudaGemmWorkspaceBytes : 0; }

std::vector<std::string> precisionCandidates(const JobSpec &spec) {
  return resolvePrecision(precision, spec.train.precision, targetDeviceModel());
}

std::optional<std::string> precisionError(const JobSpec &spec) {
  if (!cudaTarget() || targetDeviceModel().hasBf16Gemms() ||
      !llvm::is_contained(precisionCandidates(spec), "bf16"))
    return std::nullopt;
  return std::string(precision == "bf16" ? "--precision bf16" : "[train] precision = \"bf16\"") +
         " needs GEMMs in bf16, which cuBLASLt runs from sm_80; " + targetArchOrigin() +
         " has none: --precision fp16 plans fp16 with loss scaling instead";
}

std::optional<std::string> pinnedPrecision() {
  return precision == "auto" ? std::nullopt : std::optional(precision.getValue());
}

bool tf32Gemms() { return tf32; }

std::optional<std::string> targetFlagsError() {
  if (target != "cpu" && !cudaTarget())
    return "unknown --target '" + target + "' (expected cpu, cuda or cuda-sim)";
  if (target == "cuda" && !cudaTargetAvailable())
    return std::string("--target cuda needs nvcc, which this bertc was built without (build "
                       "with a CUDA toolkit in /usr/local/cuda, or use --target cpu)");
  if (!llvm::is_contained({"auto", "fp32", "bf16", "fp16"}, precision))
    return "--precision '" + precision + "': expected auto, fp32, bf16 or fp16";
  if (!arch.empty() && !gpuDeviceModel(arch))
    return "unknown --arch '" + arch + "' (known: " + knownArchs().str() + ")";
  if (arch.empty() && cudaTarget() && !archDefault().error.empty())
    return archDefault().error;
  if (tf32 && !cudaTarget())
    return "--tf32 needs a cuda target (--target cuda or cuda-sim), not --target " + target;
  if (tf32 && !targetDeviceModel().hasTf32())
    return "--tf32 needs TF32 tensor cores, from sm_80; " + targetArchOrigin() + " has none";
  return std::nullopt;
}

} // namespace bertc
