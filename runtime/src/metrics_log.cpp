// JSONL metrics log. Formatting is a pure function (formatMetricsLine) so tests can pin the
// exact text; the log class only adds the file, a newline and a flush per step.
#include "bertc/runtime/metrics_log.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace bertc {
namespace {

/// A float as JSON: "%.9g" (round-trips fp32), or null when it is not finite.
std::string jsonFloat(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

} // namespace

std::string formatMetricsLine(const StepMetrics &metrics) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.6f", metrics.seconds);
  return "{\"step\":" + std::to_string(metrics.step) +
         ",\"epoch\":" + std::to_string(metrics.epoch) +
         ",\"loss\":" + jsonFloat(metrics.loss) + ",\"lr\":" + jsonFloat(metrics.lr) +
         ",\"seconds\":" + seconds + "}";
}

MetricsLog::MetricsLog(const std::string &path)
    : path_(path), file_(std::fopen(path.c_str(), "w")) {
  if (!file_)
    throw std::runtime_error(path + ": cannot create the metrics log: " +
                             std::strerror(errno));
}

MetricsLog::~MetricsLog() { std::fclose(file_); }

void MetricsLog::append(const StepMetrics &metrics) {
  std::string line = formatMetricsLine(metrics) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() ||
      std::fflush(file_) != 0)
    throw std::runtime_error(path_ + ": cannot write the metrics log: " +
                             std::strerror(errno));
}

} // namespace bertc
