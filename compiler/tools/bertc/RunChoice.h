//===- RunChoice.h - how bertc runs a job -----------------------*- C++ -*-===//
//
// The plan bertc builds a trainer from: under --vram, the fastest one the fit driver finds
// over the axes the flags leave free (--micro-batch and --remat here, the target, optimizer
// and attention flags beside it); without a budget, the flags' (or the job's) choices.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Driver/FitDriver.h"
#include "bertc/Transforms/Pipeline.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace bertc {

struct JobSpec;

/// How to run the job: rows per micro-step, the pipeline's options and the LoRA base.
struct RunChoice {
  int64_t microBatch;
  PipelineOptions options;
  std::vector<FitCandidate> ranked; ///< what the search found, the chosen first
  /// How the job's LoRA base is stored (LoraSpec::base), settled where it is "auto".
  std::string loraBase = {};
};

/// A usage problem with --micro-batch, --remat, --offload-checkpoints or
/// --offload-embeddings, if any.
std::optional<std::string> runFlagsError();
/// --micro-batch, when it is given.
std::optional<int64_t> pinnedMicroBatch();
/// --remat: "auto" (the plan may recompute activations to fit) or "none".
const std::string &rematMode();

/// The optimizer memories the fit driver may plan for the target. On the CPU target host
/// and device memory are one, so only a pinned --offload-optimizer on lays the optimizer out
/// as for a GPU.
std::vector<bool> targetOffloadOptimizerCandidates();

/// Where the fit driver may keep the backward's checkpoints (PipelineOptions::
/// offloadCheckpoints), on the device first. On the CPU target host and device memory are
/// one, so only a pinned --offload-checkpoints on offloads them (as the GPU's plan would).
std::vector<bool> targetOffloadCheckpointCandidates();

/// Where the fit driver may keep the frozen embedding tables (PipelineOptions::
/// hostEmbeddings), on the device first. On the CPU target only a pinned
/// --offload-embeddings on lays them out as for a GPU.
std::vector<bool> targetHostEmbeddingCandidates();
/// Whether --offload-embeddings on asks for them in host memory (an error with none to move).
bool hostEmbeddingsRequired();

/// The LM head's token chunks the fit driver may plan, largest first (FitRequest's
/// lmHeadTokenChunks): for a causal LM the default (0), the powers of two below it and 16
/// (the last, the smallest workspace); {0} without an LM head.
std::vector<int64_t> lmHeadTokenChunkCandidates(const JobSpec &spec);

/// The fastest plan that fits `arenaBudget` when there is one, else the flags' (or the
/// job's) micro-batch and first precision, keeping every activation, with the first of the
/// LoRA bases without a budget (the least quantized) and the last (the smallest) over it.
RunChoice chooseRun(const JobSpec &spec, std::optional<int64_t> arenaBudget,
                    mlir::MLIRContext &ctx);

} // namespace bertc
