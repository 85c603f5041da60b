// Learning-rate schedules against values worked out by hand from Hugging Face's
// get_linear_schedule_with_warmup and TrainingArguments.get_warmup_steps.
#include "bertc/runtime/schedule.h"

#include <gtest/gtest.h>

namespace bertc {
namespace {

constexpr float kLr = 2e-5f;

/// The fp32 learning rate for a factor computed by hand.
float lrTimes(double factor) { return float(double(kLr) * factor); }

TEST(Schedule, WarmupStepsRoundUpLikePython) {
  EXPECT_EQ(warmupSteps(0.1f, 10), 1);   // ceil(10 * 0.1) = ceil(1.0) = 1, not 2
  EXPECT_EQ(warmupSteps(0.1f, 25), 3);   // ceil(2.5)
  EXPECT_EQ(warmupSteps(0.07f, 100), 8); // Python: 100 * 0.07 = 7.000000000000001 -> 8
  EXPECT_EQ(warmupSteps(0.0f, 10), 0);
  EXPECT_EQ(warmupSteps(1.0f, 10), 10);
}

TEST(Schedule, LinearWithOneWarmupStep) {
  // total 10, warmup 1: step t uses lambda(t - 1).
  // lambda(0) = 0/1 = 0; lambda(s >= 1) = (10 - s) / (10 - 1) = (10 - s) / 9.
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 1, 10, 1), 0.0f);
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 2, 10, 1), lrTimes(9.0 / 9.0));
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 3, 10, 1), lrTimes(8.0 / 9.0));
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 10, 10, 1), lrTimes(1.0 / 9.0));
}

TEST(Schedule, LinearWithThreeWarmupSteps) {
  // total 10, warmup 3: lambda(0..2) = 0, 1/3, 2/3; lambda(s >= 3) = (10 - s) / 7.
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 1, 10, 3), 0.0f);
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 2, 10, 3), lrTimes(1.0 / 3.0));
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 3, 10, 3), lrTimes(2.0 / 3.0));
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 4, 10, 3), kLr);
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 5, 10, 3), lrTimes(6.0 / 7.0));
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 10, 10, 3), lrTimes(1.0 / 7.0));
}

TEST(Schedule, LinearWithoutWarmupStartsAtTheFullRateAndNeverGoesNegative) {
  // warmup 0: lambda(s) = (4 - s) / 4; past the end it is clamped at 0.
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 1, 4, 0), kLr);
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 4, 4, 0), lrTimes(1.0 / 4.0));
  EXPECT_EQ(scheduledLr(LrSchedule::Linear, kLr, 6, 4, 0), 0.0f);
}

TEST(Schedule, ConstantIgnoresWarmup) {
  for (int64_t step : {1, 2, 10})
    EXPECT_EQ(scheduledLr(LrSchedule::Constant, kLr, step, 10, 3), kLr);
}

} // namespace
} // namespace bertc
