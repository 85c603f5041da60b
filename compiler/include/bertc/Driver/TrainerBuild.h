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

/// Compiles `source` (a generated trainer.cu) with nvcc for `arch` (sm_75 ... sm_90) into
/// the object `output`, against the runtime's headers. The compiler's output goes to
/// `logPath`; a failure's message points at it.
llvm::Error compileCudaTrainer(llvm::StringRef source, llvm::StringRef arch,
                               llvm::StringRef output, llvm::StringRef logPath);

} // namespace bertc
