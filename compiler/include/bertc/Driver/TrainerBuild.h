//===- TrainerBuild.h - compiling a generated trainer ------------*- C++ -*-===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

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

} // namespace bertc
