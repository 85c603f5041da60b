//===- TrainerBuild.h - compiling a generated trainer ------------*- C++ -*-===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bertc {

/// The flags a trainer build adds to every host-compiler command (after bertc's own, so
/// they can override an -O level): the environment's BERTC_TRAINER_CXXFLAGS, then
/// `cxxflags` (bertc --cxxflags), each split as a shell would split it. A sanitizer build
/// passes -fsanitize=... this way, which the runtime it links was built with too.
std::vector<std::string> trainerCxxFlags(llvm::StringRef cxxflags);

/// Compiles `source` (a generated CPU trainer) into the executable `output`, linked
/// with the runtime bertc was built with, adding `extraFlags` (trainerCxxFlags). The
/// compiler's output goes to `logPath`; a failure's message points at it.
llvm::Error buildCpuTrainer(llvm::StringRef source, llvm::StringRef output, llvm::StringRef logPath,
                            llvm::ArrayRef<std::string> extraFlags);

/// Whether this bertc was built with nvcc (the cuda target's compiler).
bool cudaTargetAvailable();

/// Builds `source` (a generated trainer.cu) into the executable `output`: nvcc compiles it
/// for `arch` (sm_75 ... sm_90) into the object `object`, which the host compiler links,
/// with `extraFlags`, with the CUDA runtime bertc was built with. The compilers' output
/// goes to `logPath`; a failure's message points at it.
llvm::Error buildCudaTrainer(llvm::StringRef source, llvm::StringRef arch, llvm::StringRef object,
                             llvm::StringRef output, llvm::StringRef logPath,
                             llvm::ArrayRef<std::string> extraFlags);

/// Builds `source` (a generated trainer.cu, unchanged) into the executable `output` for the
/// simulated device: the host compiler compiles it against the simulated CUDA runtime into
/// `object` and links that with the runtime's CUDA runner and kernels built for that device,
/// so it trains on the CPU as the GPU would. The device it simulates is an `arch` GPU with
/// `deviceBytes` of memory, written to `deviceSource` and compiled in. Both commands get
/// `extraFlags`, except AddressSanitizer in the compile of `source`: the device code's
/// -fsanitize=kernel-address (the simulator's memory checkers) excludes it; the link keeps
/// it, for the runtime.
llvm::Error buildSimulatedCudaTrainer(llvm::StringRef source, llvm::StringRef arch,
                                      int64_t deviceBytes, llvm::StringRef deviceSource,
                                      llvm::StringRef object, llvm::StringRef output,
                                      llvm::StringRef logPath,
                                      llvm::ArrayRef<std::string> extraFlags);

} // namespace bertc
