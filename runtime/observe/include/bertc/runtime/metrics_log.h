// The trainer's metrics log: one JSON object per optimizer step, one per line (JSONL), so a
// run can be plotted or compared while it is still going. Floats are written with "%.9g",
// enough digits to read back the exact fp32 value. A resumed run continues the log of the
// run it resumes, dropping the steps after its checkpoint.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bertc {

/// What one optimizer step reports.
struct StepMetrics {
  int64_t step;                    ///< 1-based optimizer step
  int64_t epoch;                   ///< 1-based epoch of the step's first micro-batch
  float loss;                      ///< mean loss over the step's batch
  float lr;                        ///< learning rate the step used
  double seconds;                  ///< wall time of the step
  double padFraction;              ///< share of the step's computed tokens that were padding
  std::optional<double> lossScale; ///< fp16 loss scale after the step; none without scaling
  int64_t skippedSteps = 0;        ///< steps skipped so far for overflowing gradients (fp16)
  std::optional<float> gradNorm;   ///< global gradient norm before clipping (max_grad_norm)
};

/// {"step":N,"epoch":E,"loss":L,"lr":X,"seconds":S,"pad_fraction":P} without a newline,
/// with ,"grad_norm":G before the brace when the step clipped its gradients, and
/// ,"loss_scale":X,"skipped_steps":N when the run scales its loss (fp16). A non-finite loss or lr
/// is written as null (JSON has no NaN or infinity).
std::string formatMetricsLine(const StepMetrics &metrics);

/// {"step":N,"epoch":E,"eval_loss":L,"eval_accuracy":A,...}: an evaluation after step N,
/// its values in the order given (non-finite ones as null).
std::string formatEvalLine(int64_t step, int64_t epoch,
                           const std::vector<std::pair<std::string, double>> &values);

/// An open metrics log; each append writes one line and flushes it.
class MetricsLog {
public:
  /// Creates (truncates) `path`; throws std::runtime_error naming the file on failure.
  explicit MetricsLog(const std::string &path);
  /// Continues the log at `path` after optimizer step `lastStep` (a resume): keeps the lines
  /// up to that step, drops later ones (and a line cut short by a crash) and appends from
  /// there. A missing file is created.
  MetricsLog(const std::string &path, int64_t lastStep);
  ~MetricsLog();
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;

  /// Writes formatMetricsLine(metrics) and a newline; throws when the write fails.
  void append(const StepMetrics &metrics);
  /// Writes formatEvalLine(step, epoch, values) and a newline; throws when the write fails.
  void appendEval(int64_t step, int64_t epoch,
                  const std::vector<std::pair<std::string, double>> &values);

private:
  void write(const std::string &record);

  std::string path_;
  std::FILE *file_;
};

} // namespace bertc
