// The fp16 loss scale follows torch.cuda.amp.GradScaler: start at 2^16, halve and skip on an
// overflowing step, double after growthInterval good steps in a row (an overflow restarts
// the count); the metrics log and the progress line show scale and skipped steps.
#include "bertc/runtime/loss_scaler.h"
#include "bertc/runtime/metrics_log.h"
#include "bertc/runtime/progress.h"

#include <gtest/gtest.h>

namespace bertc {
namespace {

TEST(DynamicLossScaler, StartsAtGradScalersDefault) {
  DynamicLossScaler scaler;
  EXPECT_EQ(scaler.scale(), 65536.0f);
  EXPECT_EQ(scaler.skippedSteps(), 0);
}

TEST(DynamicLossScaler, OverflowSkipsTheStepAndHalvesTheScale) {
  DynamicLossScaler scaler;
  EXPECT_FALSE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 32768.0f);
  EXPECT_FALSE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 16384.0f);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 16384.0f);
  EXPECT_EQ(scaler.skippedSteps(), 2);
}

TEST(DynamicLossScaler, DoublesAfterARunOfGoodSteps) {
  DynamicLossScaler scaler(1024.0f, 3);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 1024.0f);
  EXPECT_TRUE(scaler.update(true)); // the third good step in a row
  EXPECT_EQ(scaler.scale(), 2048.0f);
  // An overflow restarts the run: two good steps after it are not enough.
  EXPECT_TRUE(scaler.update(true));
  EXPECT_FALSE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 1024.0f);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 1024.0f);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 2048.0f);
}

TEST(DynamicLossScaler, DefaultGrowthIntervalIs2000) {
  DynamicLossScaler scaler;
  for (int step = 0; step < 1999; ++step)
    scaler.update(true);
  EXPECT_EQ(scaler.scale(), 65536.0f);
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), 131072.0f);
}

TEST(DynamicLossScaler, LogAndProgressShowTheScale) {
  EXPECT_EQ(formatMetricsLine({3, 1, 0.5f, 0.25f, 0.25, 0.125, 32768, 2}),
            R"({"step":3,"epoch":1,"loss":0.5,"lr":0.25,"seconds":0.250000,)"
            R"("pad_fraction":0.125,"loss_scale":32768,"skipped_steps":2})");
  ProgressStatus status{3, 10, 1, 0.693147182, 0.1, 845.2, 4.2, 32768, 2};
  EXPECT_EQ(formatStepLine(status), "step 3/10  loss 0.693147  lr 1.00e-01  epoch 1  845 "
                                    "samples/s  ETA 4s  scale 32768 (2 skipped)");
}

} // namespace
} // namespace bertc
