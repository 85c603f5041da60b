// What the trainer's loop does for mixed precision: keep the 16-bit working copies of the
// parameters equal to their fp32 masters after these are loaded, and run the optimizer step
// under fp16 loss scaling (unscale, check, skip on overflow).
#pragma once

#include "bertc/runtime/loss_scaler.h"
#include "bertc/runtime/trainer_plan.h"

namespace bertc {

/// Rounds every 16-bit parameter's fp32 master into its working copy (after
/// initialisation, --init or a resume wrote the masters).
void writeWorkingCopies(const TrainerPlan &plan, std::byte *arena);

/// The optimizer step after a step's micro-batches. With loss scaling, the gradients are
/// first divided by the scale the backward used and checked: on overflow the step is
/// skipped (false) and the scaler halves its scale. Sets context.adamStep to the update's
/// 1-based count. Returns whether the parameters were updated.
bool runOptimizerStep(const TrainerPlan &plan, StepContext &context,
                      DynamicLossScaler &scaler);

} // namespace bertc
