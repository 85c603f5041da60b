// Mixed precision in the trainer's loop (mixed_precision.h).
#include "mixed_precision.h"

#include "bertc/runtime/cpu_kernels.h"

namespace bertc {

void writeWorkingCopies(const TrainerPlan &plan, std::byte *arena) {
  for (size_t p = 0; p < plan.numParams; ++p) {
    const ParamSlot &param = plan.params[p];
    const auto *master = reinterpret_cast<const float *>(arena + param.masterOffset);
    if (param.storage == StorageType::BF16)
      cpu::convert(master, reinterpret_cast<bf16 *>(arena + param.offset), param.numel);
    else if (param.storage == StorageType::F16)
      cpu::convert(master, reinterpret_cast<fp16 *>(arena + param.offset), param.numel);
  }
}

bool runOptimizerStep(const TrainerPlan &plan, StepContext &context,
                      DynamicLossScaler &scaler) {
  if (plan.lossScaling) {
    // The gradients region is all fp32 gradients and zeroed alignment padding.
    auto *gradients = reinterpret_cast<float *>(context.arena + plan.gradients.offset);
    bool finite = cpu::unscaleGradients(gradients, int64_t(plan.gradients.bytes / sizeof(float)),
                                        1.0f / context.lossScale);
    if (!scaler.update(finite))
      return false;
  }
  context.adamStep = context.step - scaler.skippedSteps();
  bertcOptimizerStep(context);
  return true;
}

} // namespace bertc
