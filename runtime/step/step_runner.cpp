// The optimizer step's order, shared by both targets' runners (step_runner.h).
#include "bertc/runtime/step_runner.h"

namespace bertc {

OptimizerStepOutcome StepRunner::optimizerStep(StepContext &ctx, DynamicLossScaler &scaler) {
  OptimizerStepOutcome outcome;
  if (plan_.lossScaling && !scaler.update(unscaleGradients(1.0f / ctx.lossScale)))
    return outcome;
  if (plan_.train.maxGradNorm > 0)
    outcome.gradNorm = clipGradients(plan_.train.maxGradNorm);
  ctx.adamStep = ctx.step - scaler.skippedSteps();
  applyUpdate(ctx);
  outcome.updated = true;
  return outcome;
}

} // namespace bertc
