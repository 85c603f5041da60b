//===- PlanSearch.h - planning a job at other settings ----------*- C++ -*-===//
//
// What-if planning: the same job at another micro-batch, sequence length or set of
// frozen groups, each planned through the real pipeline. The fit advice shown when a
// budget cannot be met and `bertc --max-batch` are built on it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Analysis/StepCost.h"
#include "bertc/Transforms/Pipeline.h"
#include "bertc/frontend/JobSpec.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace bertc {

struct PlanSummary;
struct StepMemory;

/// One variation of a job.
struct PlanPoint {
  int64_t microBatch;
  int64_t seqLen;
  std::vector<std::string> freeze;
  PipelineOptions options = {};
};

/// What planning a variation gives.
struct PlanOutcome {
  int64_t arenaBytes = 0;      ///< of the device arena (the whole arena unless offloaded)
  int64_t hostBytes = 0;       ///< host memory of what is offloaded (offloadHostBytes)
  StepCost cost;               ///< one optimizer step on the device model planned for
  int64_t checkpointBytes = 0; ///< of hostBytes, the offloaded checkpoints' host copies
  int64_t hostTableBytes = 0;  ///< of hostBytes, the embedding tables in host memory
};

/// Plans the job `spec` at `point` and estimates its step on `device` (failure if the
/// variation is not a valid job).
mlir::FailureOr<PlanOutcome> planJob(const JobSpec &spec, const PlanPoint &point,
                                     const DeviceModel &device, mlir::MLIRContext &ctx);

/// The arena bytes of planJob; failure also where offloaded checkpoints take more host
/// memory than PipelineOptions::hostRamBudget.
mlir::FailureOr<int64_t> planArenaBytes(const JobSpec &spec, const PlanPoint &point,
                                        mlir::MLIRContext &ctx);

/// The largest value of a setting that fits, with the arena it plans to; both 0 when
/// not even the smallest value fits.
struct Fitting {
  int64_t value = 0;
  int64_t arenaBytes = 0;
};

/// The largest micro-batch in [1, limit] whose arena is at most `arenaBudget` at
/// `seqLen`. The arena grows with the micro-batch (with recomputation too: its trial plans
/// measure the final arena, and the lowest-peak plan is tried last), so a doubling search
/// then bisection finds it in O(log limit) plans.
Fitting largestFittingMicroBatch(const JobSpec &spec, int64_t seqLen, int64_t limit,
                                 int64_t arenaBudget, const PipelineOptions &options,
                                 mlir::MLIRContext &ctx);

/// The longest seq_len in [1, limit] whose arena is at most `arenaBudget` at
/// `microBatch` rows (the arena grows with the sequence as with the micro-batch: the same
/// doubling search then bisection).
Fitting largestFittingSeqLen(const JobSpec &spec, int64_t microBatch, int64_t limit,
                             int64_t arenaBudget, const PipelineOptions &options,
                             mlir::MLIRContext &ctx);

/// The divisors of `batch`, smallest first: the micro-batches that run it exactly (a
/// micro-batch that does not divide the batch would round it up to a multiple).
std::vector<int64_t> batchDivisors(int64_t batch);

/// The largest micro-batch in [1, limit] that divides the job's batch and whose arena is at
/// most `arenaBudget` (a bisection over the divisors, as the arena grows with them).
Fitting largestFittingDivisor(const JobSpec &spec, int64_t limit, int64_t arenaBudget,
                              const PipelineOptions &options, mlir::MLIRContext &ctx);

/// Ways to make `spec` fit `arenaBudget`, with their numbers, and the tensors that
/// dominate the plan that does not fit; printed after the over-budget error. Each way is
/// planned with the run's `options`, changed in its own axis only.
void printFitAdvice(const JobSpec &spec, const PlanSummary &plan, const StepMemory &memory,
                    int64_t arenaBudget, const PipelineOptions &options, mlir::MLIRContext &ctx,
                    llvm::raw_ostream &os);

/// The sequence lengths `bertc --max-batch` reports: 64, 128, 256, 320, 384 and 512, then
/// 1024 doubling (a decoder's long contexts), up to `maxPosition`, and `maxPosition` itself
/// when not among them (a model of 40 positions gets the row 40).
std::vector<int64_t> maxBatchSeqLens(int64_t maxPosition);

/// `bertc --max-batch`: for each of `seqLens`, the largest micro-batch that fits with
/// `options`, as a table on `table` and as JSON on `json`.
void printMaxBatchTable(const JobSpec &spec, llvm::ArrayRef<int64_t> seqLens, int64_t arenaBudget,
                        const PipelineOptions &options, mlir::MLIRContext &ctx,
                        llvm::raw_ostream &table, llvm::raw_ostream &json);

} // namespace bertc
