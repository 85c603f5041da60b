// The metrics log's exact line format, round-tripping of the loss, and the file it writes.
#include "bertc/runtime/metrics_log.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>

namespace bertc {
namespace {

TEST(MetricsLog, LineFormat) {
  // ln 2 in fp32 is 0.693147182464599609375; 2e-5f is 1.99999994947575...e-05.
  EXPECT_EQ(formatMetricsLine({3, 1, 0.693147182f, 2e-5f, 0.25}),
            R"({"step":3,"epoch":1,"loss":0.693147182,"lr":1.99999995e-05,"seconds":0.250000})");
}

TEST(MetricsLog, LossRoundTripsExactly) {
  float loss = 1.0f / 3.0f;
  nlohmann::json line = nlohmann::json::parse(formatMetricsLine({1, 1, loss, 0.0f, 0.0}));
  EXPECT_EQ(std::strtof(line["loss"].dump().c_str(), nullptr), loss);
}

TEST(MetricsLog, NonFiniteValuesAreJsonNull) {
  std::string line = formatMetricsLine({7, 2, std::nanf(""), INFINITY, 1.5});
  EXPECT_EQ(line, R"({"step":7,"epoch":2,"loss":null,"lr":null,"seconds":1.500000})");
  EXPECT_NO_THROW(nlohmann::json::parse(line));
}

TEST(MetricsLog, WritesOneLinePerStep) {
  testing::ScratchDir dir;
  std::string path = dir.file("metrics.jsonl");
  {
    MetricsLog log(path);
    log.append({1, 1, 0.5f, 1e-3f, 0.1});
    log.append({2, 1, 0.25f, 1e-3f, 0.1});
  }
  EXPECT_EQ(testing::readText(path),
            "{\"step\":1,\"epoch\":1,\"loss\":0.5,\"lr\":0.00100000005,\"seconds\":0.100000}\n"
            "{\"step\":2,\"epoch\":1,\"loss\":0.25,\"lr\":0.00100000005,\"seconds\":0.100000}\n");
  EXPECT_THROW(MetricsLog(dir.file("no/such/dir/metrics.jsonl")), std::runtime_error);
}

} // namespace
} // namespace bertc
