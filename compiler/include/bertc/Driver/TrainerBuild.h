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

} // namespace bertc
