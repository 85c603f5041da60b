//===- TrainerBuild.h - compiling a generated trainer ------------*- C++ -*-===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace bertc {

/// Compiles `source` (a generated CPU trainer) into the executable `output`, linked
/// with the runtime bertc was built with. The compiler's output goes to `logPath`;
/// a failure's message points at it.
llvm::Error buildCpuTrainer(llvm::StringRef source, llvm::StringRef output,
                            llvm::StringRef logPath);

/// Whether this bertc was built with nvcc (the cuda target's compiler).
bool cudaTargetAvailable();

/// Builds `source` (a generated trainer.cu) into the executable `output`: nvcc compiles it
/// for `arch` (sm_75 ... sm_90) into the object `object`, which is linked with the CUDA
/// runtime bertc was built with. The compilers' output goes to `logPath`; a failure's
/// message points at it.
llvm::Error buildCudaTrainer(llvm::StringRef source, llvm::StringRef arch,
                             llvm::StringRef object, llvm::StringRef output,
                             llvm::StringRef logPath);

/// Builds `source` (a generated trainer.cu, unchanged) into the executable `output` for the
/// simulated device: the host compiler compiles it against the simulated CUDA runtime and
/// links it with the runtime's CUDA runner and kernels built for that device, so it trains
/// on the CPU as the GPU would. The device it simulates is an `arch` GPU with
/// `deviceBytes` of memory, written to `deviceSource` and compiled in.
llvm::Error buildSimulatedCudaTrainer(llvm::StringRef source, llvm::StringRef arch,
                                      int64_t deviceBytes, llvm::StringRef deviceSource,
                                      llvm::StringRef output, llvm::StringRef logPath);

} // namespace bertc
