//===- TomlFrontend.h - reads a job's TOML file into a JobSpec ---*- C++ -*-===//
//
// The only entry point that knows TOML. Every problem in the file (syntax, unknown
// tables or keys, wrong types, out-of-range values, an unreadable `from` folder) is
// reported as an MLIR diagnostic at `file.toml:line:col`, all of them, not just the first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"

namespace bertc {

/// Reads the job at `path`: TOML keys over `[model] from`'s config.json over BERT-base
/// defaults, with every path made absolute. Emits diagnostics through `ctx` and fails
/// when any setting is missing its mark.
mlir::FailureOr<JobSpec> parseJobFile(llvm::StringRef path, mlir::MLIRContext &ctx);

/// Fills `model` (its family from `model_type`, and `head.labels`, `head.dropout`) from the
/// Hugging Face config at `folder`/config.json and records model.safetensors (else
/// model.safetensors.index.json, else pytorch_model.bin) and vocab.txt when present.
/// Diagnostics go to `fromLoc`, the location of the `from` key. Used by parseJobFile.
mlir::LogicalResult readHuggingFaceFolder(llvm::StringRef folder, mlir::FileLineColLoc fromLoc,
                                          ModelSpec &model, HeadSpec &head);

} // namespace bertc
