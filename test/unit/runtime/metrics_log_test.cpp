// The metrics log's exact line format, round-tripping of the loss, the file it writes, and
// how a resumed run continues it.
#include "bertc/runtime/metrics_log.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace bertc {
namespace {

TEST(MetricsLog, LineFormat) {
  // ln 2 in fp32 is 0.693147182464599609375; 2e-5f is 1.99999994947575...e-05.
  EXPECT_EQ(formatMetricsLine({3, 1, 0.693147182f, 2e-5f, 0.25, 0.125}),
            R"({"step":3,"epoch":1,"loss":0.693147182,"lr":1.99999995e-05,"seconds":0.250000,)"
            R"("pad_fraction":0.125})");
}

TEST(MetricsLog, GradNormAndLossScaleFieldsWhenPresent) {
  StepMetrics metrics{2, 1, 0.5f, 1e-3f, 0.5, 0.0, 1024.0, 3, 12.5f};
  EXPECT_EQ(formatMetricsLine(metrics),
            R"({"step":2,"epoch":1,"loss":0.5,"lr":0.00100000005,"seconds":0.500000,)"
            R"("pad_fraction":0,"grad_norm":12.5,"loss_scale":1024,"skipped_steps":3})");
}

TEST(MetricsLog, LossRoundTripsExactly) {
  float loss = 1.0f / 3.0f;
  nlohmann::json line = nlohmann::json::parse(formatMetricsLine({1, 1, loss, 0.0f, 0.0, 0.0}));
  EXPECT_EQ(std::strtof(line["loss"].dump().c_str(), nullptr), loss);
}

TEST(MetricsLog, NonFiniteValuesAreJsonNull) {
  std::string line = formatMetricsLine({7, 2, std::nanf(""), INFINITY, 1.5, 0.5});
  EXPECT_EQ(line,
            R"({"step":7,"epoch":2,"loss":null,"lr":null,"seconds":1.500000,"pad_fraction":0.5})");
  EXPECT_NO_THROW(nlohmann::json::parse(line));
}

TEST(MetricsLog, WritesOneLinePerStep) {
  testing::ScratchDir dir;
  std::string path = dir.file("metrics.jsonl");
  {
    MetricsLog log(path);
    log.append({1, 1, 0.5f, 1e-3f, 0.1, 0.0});
    log.append({2, 1, 0.25f, 1e-3f, 0.1, 0.25});
  }
  EXPECT_EQ(testing::readText(path),
            "{\"step\":1,\"epoch\":1,\"loss\":0.5,\"lr\":0.00100000005,\"seconds\":0.100000,"
            "\"pad_fraction\":0}\n"
            "{\"step\":2,\"epoch\":1,\"loss\":0.25,\"lr\":0.00100000005,\"seconds\":0.100000,"
            "\"pad_fraction\":0.25}\n");
  EXPECT_THROW(MetricsLog(dir.file("no/such/dir/metrics.jsonl")), std::runtime_error);
}

TEST(MetricsLog, AResumeKeepsTheStepsUpToItsCheckpoint) {
  // A crashed run logged steps 1..3 and half a line of step 4; its checkpoint is step 2.
  testing::ScratchDir dir;
  std::string path = dir.file("metrics.jsonl");
  std::string step1 = formatMetricsLine({1, 1, 0.5f, 1e-3f, 0.1, 0.0});
  std::string step2 = formatMetricsLine({2, 1, 0.4f, 1e-3f, 0.1, 0.0});
  std::string step3 = formatMetricsLine({3, 1, 0.3f, 1e-3f, 0.1, 0.0});
  testing::writeText(path, step1 + "\n" + R"({"note":"no step"})" + "\n" + step2 + "\n" + step3 +
                               "\n" + step3.substr(0, 20));
  {
    MetricsLog log(path, /*lastStep=*/2);
    log.append({3, 1, 0.25f, 1e-3f, 0.1, 0.0});
  }
  EXPECT_EQ(testing::readText(path), step1 + "\n" + R"({"note":"no step"})" + "\n" + step2 + "\n" +
                                         formatMetricsLine({3, 1, 0.25f, 1e-3f, 0.1, 0.0}) + "\n");

  // A resume with a fresh log file starts it.
  std::string fresh = dir.file("fresh.jsonl");
  {
    MetricsLog log(fresh, /*lastStep=*/2);
  }
  EXPECT_EQ(testing::readText(fresh), "");
  std::vector<std::string> files;
  for (const auto &entry : std::filesystem::directory_iterator(dir.file("")))
    files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"fresh.jsonl", "metrics.jsonl"}))
      << "no temporary file is left behind";
}

} // namespace
} // namespace bertc
