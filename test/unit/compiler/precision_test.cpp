// resolvePrecision: an explicit --precision wins over the job's, the job's over auto, and
// auto takes the device's 16-bit precision (fp32 as the fallback) or fp32 on the CPU.
#include "bertc/Driver/Precision.h"

#include <gtest/gtest.h>

using bertc::DeviceModel;
using bertc::resolvePrecision;
using mlir::bert::CostTarget;
using Candidates = std::vector<std::string>;

namespace {
// Only halfPrecision matters to the rule; the speeds are placeholders.
const DeviceModel kCpu{"cpu", CostTarget::Cpu, 1e11, 1e11, 1e10, 2e10, 1e-6, ""};
const DeviceModel kAmpere{"sm_80", CostTarget::Cuda, 1.9e13, 3.1e14, 1e13, 2e12, 5e-6, "bf16"};
const DeviceModel kTuring{"sm_75", CostTarget::Cuda, 8e12, 6.5e13, 4e12, 3e11, 5e-6, "fp16"};
} // namespace

TEST(ResolvePrecision, AutoOnTheCpuIsFp32) {
  EXPECT_EQ(resolvePrecision("auto", "auto", kCpu), Candidates{"fp32"});
}

TEST(ResolvePrecision, AutoTakesTheArchsHalfPrecisionWithFp32Fallback) {
  EXPECT_EQ(resolvePrecision("auto", "auto", kAmpere), (Candidates{"bf16", "fp32"}));
  EXPECT_EQ(resolvePrecision("auto", "auto", kTuring), (Candidates{"fp16", "fp32"}));
}

TEST(ResolvePrecision, TheJobsChoiceBeatsAuto) {
  EXPECT_EQ(resolvePrecision("auto", "fp16", kCpu), Candidates{"fp16"});
  EXPECT_EQ(resolvePrecision("auto", "fp32", kAmpere), Candidates{"fp32"});
}

TEST(ResolvePrecision, TheFlagBeatsTheJob) {
  EXPECT_EQ(resolvePrecision("bf16", "fp32", kCpu), Candidates{"bf16"});
  EXPECT_EQ(resolvePrecision("fp32", "bf16", kTuring), Candidates{"fp32"});
}
