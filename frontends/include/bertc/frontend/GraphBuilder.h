//===- GraphBuilder.h - a JobSpec into the `bert` forward graph --*- C++ -*-===//
//
// Turns a checked JobSpec into the module the compiler's passes start from: the
// forward pass and loss of Hugging Face's BertForSequenceClassification as one
// `@micro_step` function, with the job's training settings as module attributes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/abi/trainer.h"
#include "bertc/frontend/JobSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace bertc {

/// Builds the training module of `spec` for micro-batches of up to `microBatch` rows:
///   - `bert.max_batch` (= microBatch) and `bert.max_seq` (= seq_len), both i64;
///   - `bert.train`, the #bert.train settings the trainer is compiled with;
///   - `func.func @micro_step() -> tensor<f32>`: inputs, parameters (HF names, freeze
///     groups, decay, init), encoder, pooler, classifier and mean cross-entropy, each op
///     located at the TOML key that decides it, each dropout/attention with its own stream.
/// Loads the bert and func dialects into `ctx`. Returns null after emitting diagnostics
/// when `microBatch` is out of [1, batch] or the built module does not verify.
mlir::OwningOpRef<mlir::ModuleOp> buildTrainGraph(const JobSpec &spec, int64_t microBatch,
                                                  mlir::MLIRContext &ctx);

/// The job's [data] settings and files as the trainer's defaults (data_settings.def). They
/// go to codegen beside the module, not through it; the texts point into `spec`.
JobDataSettings jobDataSettings(const JobSpec &spec);

} // namespace bertc
