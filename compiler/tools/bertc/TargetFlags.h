//===- TargetFlags.h - what bertc plans and builds for ----------*- C++ -*-===//
//
// The bertc driver's flags for the machine a trainer is made for: where it runs
// (--target: cpu, a GPU, or the simulated GPU), the GPU generation its plan is estimated
// on (--arch), the storage precisions the plan may use (--precision) and the fp32 GEMMs'
// math (--tf32).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bertc {

struct DeviceModel;
struct JobSpec;

/// Sets --target when it was not given: to `implied` (what the -emit level implies) when
/// there is one, else to cuda where this bertc was built with nvcc, else to cpu.
void defaultTarget(std::optional<std::string> implied);
/// --target: "cpu", "cuda" or "cuda-sim".
const std::string &targetName();
/// Whether the target runs the generated trainer.cu: on a GPU (cuda) or on the simulated
/// one (cuda-sim), which plans, emits and runs exactly as the GPU does.
bool cudaTarget();
/// The GPU generation planned for: --arch; for the CUDA targets without it BERTC_ARCH, else
/// with --target cuda this machine's GPU (nvidia-smi: the newest --arch it runs), else sm_80.
std::string targetArch();
/// The plan summary's line saying that this machine's GPU chose the --arch, when it did.
void printArchNote(llvm::raw_ostream &os);
/// The device the plan's step time is estimated on: the target's GPU, else the CPU.
const DeviceModel &targetDeviceModel();
/// The GEMM library's workspace the plan must hold: cuBLASLt's for the CUDA targets.
int64_t gemmWorkspaceBytes();

/// The precisions to plan for `spec`, the preferred first (bertc/Driver/Precision.h).
std::vector<std::string> precisionCandidates(const JobSpec &spec);
/// Why `spec` cannot be planned at its precision for the GPU planned for (bf16 before sm_80),
/// if it cannot.
std::optional<std::string> precisionError(const JobSpec &spec);
/// --precision when it names one (not auto).
std::optional<std::string> pinnedPrecision();
/// Whether --tf32 asks for the fp32 GEMMs on TF32 tensor cores.
bool tf32Gemms();

/// A usage problem with --target, --arch, --precision or --tf32, if any (after
/// defaultTarget).
std::optional<std::string> targetFlagsError();

} // namespace bertc
