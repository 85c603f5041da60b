// Learning-rate schedules, computed exactly as Hugging Face transformers does: "constant"
// (get_constant_schedule) and "linear" (get_linear_schedule_with_warmup, with the warmup
// step count of TrainingArguments.get_warmup_steps).
#pragma once

#include "bertc/abi/trainer.h"

#include <cstdint>

namespace bertc {

/// Warmup steps for a warmup fraction: ceil(fraction * totalSteps), evaluated in double
/// precision on the decimal value the fraction was written as (0.1f counts as 0.1), as
/// Python computes math.ceil(num_training_steps * warmup_ratio).
int64_t warmupSteps(float warmupFraction, int64_t totalSteps);

/// Learning rate of 1-based optimizer step `step`: baseLr for Constant; for Linear,
/// baseLr * lambda(step - 1) with lambda(s) = s / max(1, warmup) while s < warmup, else
/// max(0, (total - s) / max(1, total - warmup)).
float scheduledLr(LrSchedule schedule, float baseLr, int64_t step, int64_t totalSteps,
                  int64_t warmup);

} // namespace bertc
