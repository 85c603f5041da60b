// Where a trainer's generated steps run, as the driver (trainer_main.cpp, evaluation.cpp)
// sees it. The driver keeps its state in the host arena, which has the arena's layout: it
// writes each micro-batch's inputs into their slots there, and initialises, loads and saves
// parameters, masters and moments there. A runner moves what the steps need between the
// host arena and the arena the steps run on, at fixed points only:
//   - parameters, masters and moments: to the steps once they are set (pushState), back
//     before the host reads them for a save (pullState);
//   - each micro-batch's input slots to the steps, and its loss back;
//   - an eval step's logits back, and the optimizer step's scalars: fp16's overflow flag,
//     the gradient norm when clipping.
// The CPU target runs its steps on the host arena itself and moves nothing
// (cpu_step_runner.cpp); the CUDA target runs them on a device arena
// (cuda/cuda_step_runner.cpp). A trainer links exactly one of the two.
#pragma once

#include "bertc/abi/trainer.h"
#include "bertc/runtime/loss_scaler.h"
#include "bertc/runtime/op_times.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace bertc {

/// The arena does not fit in the memory the steps run on (the trainer exits with code 3).
struct ArenaAllocationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Bytes of the labels slot a micro-batch of `rows` rows padded to `seq` tokens fills.
inline size_t labelBytes(TaskKind task, int64_t rows, int64_t seq) {
  switch (task) {
  case TaskKind::Span:
    return size_t(2 * rows) * 4;
  case TaskKind::TokenClassification:
  case TaskKind::CausalLM:
    return size_t(rows * seq) * 4;
  default:
    return size_t(rows) * 4; // an int32 class or an fp32 target per row
  }
}

/// What an optimizer step did.
struct OptimizerStepOutcome {
  bool updated = false;          ///< false when fp16's overflow check skipped the update
  std::optional<float> gradNorm; ///< with max_grad_norm: the global norm before clipping
};

class StepRunner {
public:
  explicit StepRunner(const TrainerPlan &plan) : plan_(plan) {}
  virtual ~StepRunner() = default;

  const TrainerPlan &plan() const { return plan_; }

  /// The driver's arena: inputs, parameters, masters and moments are read and written here.
  virtual std::byte *hostArena() = 0;

  /// Makes the steps see the host arena's parameters, masters and moments.
  virtual void pushState() = 0;
  /// Makes the host arena hold the steps' current parameters, masters and moments.
  virtual void pullState() = 0;

  /// Zeroes the gradients region (before an optimizer step's first micro-batch).
  virtual void zeroGradients() = 0;
  /// The micro-step on the micro-batch in the host arena's input slots (ctx.batch rows of
  /// ctx.seq tokens). Fills in ctx.arena and ctx.scratch; returns the micro-batch's loss.
  virtual float microStep(StepContext &ctx) = 0;
  /// The optimizer step after a step's micro-batches:
  /// 1. with loss scaling (fp16), the gradients are divided by ctx.lossScale and checked:
  ///    on inf or NaN the update is skipped and the scaler halves its scale;
  /// 2. with a max_grad_norm (TrainSettings::maxGradNorm > 0), the gradients are scaled
  ///    so that their global L2 norm is at most that (clip_grad_norm_);
  /// 3. AdamW, ctx.adamStep set to the update's 1-based count.
  OptimizerStepOutcome optimizerStep(StepContext &ctx, DynamicLossScaler &scaler);
  /// The eval step on the micro-batch in the host arena's input slots: the head's fp32
  /// logits into `logits` (host memory); returns the micro-batch's loss.
  virtual float evalStep(StepContext &ctx, float *logits) = 0;

  /// What the run's memory came to, for the end of the run ("" when there is nothing to
  /// add to the plan's own figures).
  virtual std::string memoryReport() = 0;

  /// The op timer of a trainer built with bertc --time-ops (TrainerPlan::timesOps): the
  /// host's clock, unless the steps run on a device.
  virtual std::unique_ptr<OpTimes> makeOpTimes() { return std::make_unique<HostOpTimes>(); }

protected:
  // The optimizer step's parts, on the gradients region (all fp32 gradients and zeroed
  // alignment padding) where the steps run.
  /// Multiplies every gradient by `inverseScale`; returns whether all are finite.
  virtual bool unscaleGradients(float inverseScale) = 0;
  /// Scales the gradients to a global L2 norm of at most `maxNorm`; returns the norm before.
  virtual float clipGradients(float maxNorm) = 0;
  /// The optimizer step's AdamW update.
  virtual void applyUpdate(StepContext &ctx) = 0;

  const TrainerPlan &plan_;
};

/// Refuses, before the run reads its data, a machine whose device cannot run `trainer`'s
/// steps (throws std::runtime_error saying what it lacks): the cuda target's GPU must be
/// there and new enough for them (cuda_device_arch.h); the cpu target has nothing to check.
void requireRunnableDevice(const Trainer &trainer);

/// The runner of this runtime's target for `trainer` (on a device requireRunnableDevice
/// accepted), with its arena allocated (throws ArenaAllocationError when the arena does not
/// fit, std::runtime_error when the trainer was built for another target).
std::unique_ptr<StepRunner> makeStepRunner(const Trainer &trainer);

} // namespace bertc
