//===- TrainerOutput.h - what bertc writes into OUTDIR ----------*- C++ -*-===//
//
// -o DIR and the flags that shape the trainer built there (--plan-check, --time-ops,
// --cxxflags): OUTDIR's files, the trainer's source and the trainer itself.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/abi/trainer.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace bertc {

/// Whether the trainer is to carry the plan checks (--plan-check, or a planned stage
/// printed with them).
bool planChecksWanted();
void wantPlanChecks();

/// Creates OUTDIR, or reports why it could not.
bool createOutputDir();

/// Writes OUTDIR/name through `write` and sets `path` to it, or reports why it could not.
bool writeOutput(llvm::StringRef name, llvm::function_ref<void(llvm::raw_ostream &)> write,
                 std::string &path);

/// Adds what a planned module's trainer carries beyond its steps, after the analyses of
/// the plan, which must not count it: with --time-ops the attribute that makes the
/// micro-step report each op to the op timer, and the plan checks when wanted.
mlir::LogicalResult addInstrumentation(mlir::ModuleOp module);

/// `-emit=cpp`: the trainer's C++ source on stdout, or as OUTDIR/trainer.cpp when -o is
/// given. Returns an ExitCode.
int emitCppSource(mlir::ModuleOp module, const JobDataSettings &data, llvm::StringRef inputPath);

/// Writes OUTDIR/trainer.cpp (target cpu) or OUTDIR/trainer.cu (the CUDA targets, compiled
/// for --arch or for the simulated device) and builds the executable OUTDIR/trainer from
/// it. Returns an ExitCode.
int writeTrainer(mlir::ModuleOp module, const JobDataSettings &data, int64_t budget,
                 llvm::StringRef inputPath);

} // namespace bertc
