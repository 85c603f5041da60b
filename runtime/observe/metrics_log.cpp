// JSONL metrics log. Formatting is a pure function (formatMetricsLine) so tests can pin the
// exact text; the log class only adds the file, a newline and a flush per step, and on a
// resume the trimming of steps the resumed run will redo.
#include "bertc/runtime/metrics_log.h"

#include "bertc/runtime/input_files.h"
#include "bertc/runtime/save_files.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
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

/// ,"loss_scale":X,"skipped_steps":N for a run with fp16 loss scaling, else nothing.
std::string lossScaleFields(const StepMetrics &metrics) {
  if (!metrics.lossScale)
    return "";
  return ",\"loss_scale\":" + jsonFloat(*metrics.lossScale) +
         ",\"skipped_steps\":" + std::to_string(metrics.skippedSteps);
}

} // namespace

std::string formatMetricsLine(const StepMetrics &metrics) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.6f", metrics.seconds);
  return "{\"step\":" + std::to_string(metrics.step) +
         ",\"epoch\":" + std::to_string(metrics.epoch) + ",\"loss\":" + jsonFloat(metrics.loss) +
         ",\"lr\":" + jsonFloat(metrics.lr) + ",\"seconds\":" + seconds +
         ",\"pad_fraction\":" + jsonFloat(metrics.padFraction) +
         (metrics.gradNorm ? ",\"grad_norm\":" + jsonFloat(*metrics.gradNorm) : "") +
         lossScaleFields(metrics) + "}";
}

std::string formatEvalLine(int64_t step, int64_t epoch,
                           const std::vector<std::pair<std::string, double>> &values) {
  std::string line = "{\"step\":" + std::to_string(step) + ",\"epoch\":" + std::to_string(epoch);
  for (const auto &[name, value] : values)
    line += ",\"" + name + "\":" + jsonFloat(value);
  return line + "}";
}

MetricsLog::MetricsLog(const std::string &path)
    : path_(path), file_(std::fopen(path.c_str(), "w")) {
  if (!file_)
    throw std::runtime_error(path + ": cannot create the metrics log: " + std::strerror(errno));
}

/// Keeps the complete lines whose "step" is at most `lastStep` (and any without a step),
/// rewrites the file atomically with them, then opens it for appending.
MetricsLog::MetricsLog(const std::string &path, int64_t lastStep) : path_(path) {
  std::string kept;
  std::error_code ignored;
  std::string existing = std::filesystem::exists(path, ignored)
                             ? readWholeFile<std::runtime_error>(path, kMetricsLogLimit)
                             : std::string();
  forEachLine(existing, [&](int64_t, std::string_view line) {
    if (findJsonLimitIssue(line))
      return;
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded() || !record.is_object())
      return;
    auto step = record.find("step");
    if (step == record.end() || (step->is_number_integer() && step->get<int64_t>() <= lastStep))
      kept += std::string(line) + "\n";
  });
  writeTextFileAtomically(path, kept);
  file_ = std::fopen(path.c_str(), "a");
  if (!file_)
    throw std::runtime_error(path + ": cannot open the metrics log: " + std::strerror(errno));
}

MetricsLog::~MetricsLog() { std::fclose(file_); }

void MetricsLog::append(const StepMetrics &metrics) { write(formatMetricsLine(metrics)); }

void MetricsLog::appendEval(int64_t step, int64_t epoch,
                            const std::vector<std::pair<std::string, double>> &values) {
  write(formatEvalLine(step, epoch, values));
}

void MetricsLog::write(const std::string &record) {
  std::string line = record + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw std::runtime_error(path_ + ": cannot write the metrics log: " + std::strerror(errno));
}

} // namespace bertc
