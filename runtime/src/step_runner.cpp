// The optimizer step's order, shared by both targets' runners (step_runner.h).
#include "bertc/runtime/step_runner.h"

namespace bertc {

OptimizerStepOutcome StepRunner::optimizerStep(StepContext &ctx, DynamicLossScaler &scaler) {
  const TrainerPlan &plan = kTrainerPlan;
  OptimizerStepOutcome outcome;
  if (plan.lossScaling && !scaler.update(unscaleGradients(1.0f / ctx.lossScale)))
    return outcome;
  if (plan.train.maxGradNorm > 0)
    outcome.gradNorm = clipGradients(plan.train.maxGradNorm);
  ctx.adamStep = ctx.step - scaler.skippedSteps();
  applyUpdate(ctx);
  outcome.updated = true;
  return outcome;
}

} // namespace bertc
