// What a training run shows a person: on a terminal one status line redrawn in place (step,
// bar, epoch, recent loss, lr, samples/s, ETA), otherwise one plain line per optimizer step
// ("step N/M  loss X  ..."), and with --quiet only a final one-line summary. The formatting
// is pure functions, pinned by tests; ProgressDisplay adds the clock and the stream.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace bertc {

/// A duration for people, two units at most: "0s", "42s", "3m05s", "1h02m", "2d03h"; "?"
/// when negative or not finite (nothing measured yet).
std::string formatDuration(double seconds);

/// A progress bar of `width` cells, '#' for the done part of `fraction` (clamped to [0, 1],
/// rounded down so the bar is full only when done) and '.' for the rest.
std::string formatBar(double fraction, int width);

/// A rate with three significant digits and a k/M suffix: "0.52", "12.3", "845", "12.3k",
/// "4.56M"; "?" when not finite.
std::string formatRate(double perSecond);

/// The mean of the last `window` values pushed (all of them while fewer).
class RecentMean {
public:
  explicit RecentMean(size_t window) : values_(window) {}
  void push(double value);
  /// 0 before the first value.
  double mean() const;

private:
  std::vector<double> values_; ///< ring buffer
  size_t next_ = 0;
  size_t count_ = 0;
};

/// One optimizer step as the display shows it.
struct ProgressStatus {
  int64_t step; ///< 1-based optimizer step just done
  int64_t totalSteps;
  int64_t epoch; ///< 1-based
  double loss;   ///< the step's loss on plain lines, the recent mean on a terminal
  double lr;
  double samplesPerSecond;
  double etaSeconds;               ///< negative when unknown
  std::optional<double> lossScale; ///< fp16 loss scale; none without scaling (not shown)
  int64_t skippedSteps = 0;        ///< steps skipped for overflowing gradients so far
};

/// "step 3/10  loss 0.693147  lr 1.00e-01  epoch 1  845 samples/s  ETA 4s": a plain line;
/// with fp16 loss scaling both lines end in "  scale 32768 (2 skipped)".
std::string formatStepLine(const ProgressStatus &status);

/// "step 3/10 [###.......]  30%  epoch 1  loss 0.6931  lr 1.00e-01  845 samples/s  ETA 4s":
/// the terminal's in-place line (without the carriage return).
std::string formatTerminalLine(const ProgressStatus &status, int barWidth);

/// What the final line reports.
struct RunSummary {
  int64_t startStep; ///< steps already done when this process started (resume), else 0
  int64_t lastStep;  ///< the last step done
  int64_t totalSteps;
  double lastLoss;    ///< loss of the last step run by this process
  double padFraction; ///< padding share of every computed token of the run
  double seconds;     ///< wall time of this process's steps
  double samplesPerSecond;
};

/// "done: step 10/10, loss 0.612345, padding 31.2% of tokens, 1.20s, 845 samples/s", with
/// " (resumed at step 4)" after the steps when resumed, and "nothing to train" in place of
/// loss and speed when this process ran no step.
std::string formatSummary(const RunSummary &summary);

enum class ProgressMode : uint8_t {
  Terminal, ///< one line redrawn in place
  Lines,    ///< one line per step
  Quiet,    ///< the summary only
};

/// Shows a run's progress on `out` (stdout): call step() after every optimizer step and
/// finish() once at the end; note() prints a message (e.g. a checkpoint saved) on its own
/// line without breaking the terminal's status line.
class ProgressDisplay {
public:
  /// Recent-loss window of the terminal line.
  static constexpr size_t kLossWindow = 20;

  ProgressDisplay(ProgressMode mode, int64_t stepsDone, int64_t totalSteps,
                  std::FILE *out = stdout);
  /// A run that stops before finish() (an error on its way to stderr) ends the terminal's
  /// status line, showing the last step, so that the error starts a line of its own.
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay &) = delete;
  ProgressDisplay &operator=(const ProgressDisplay &) = delete;

  /// Reports optimizer step `step` (of epoch `epoch`, `rows` rows, loss and lr).
  void step(int64_t step, int64_t epoch, float loss, float lr, int64_t rows);
  /// The fp16 loss scale and skipped steps the following step() lines show.
  void lossScale(std::optional<double> scale, int64_t skippedSteps);
  /// A line of its own; nothing when quiet.
  void note(const std::string &message);
  /// Ends the status line and prints the summary.
  void finish(double padFraction);

private:
  double elapsed() const;
  void redraw();
  void endStatusLine();

  ProgressMode mode_;
  std::FILE *out_;
  int64_t startStep_, totalSteps_;
  std::chrono::steady_clock::time_point start_;
  double lastDraw_ = -1.0;   ///< elapsed() of the last terminal redraw
  std::string statusLine_;   ///< the latest terminal line ("" before the first step)
  bool lineIsStale_ = false; ///< statusLine_ is newer than what the terminal shows
  bool finished_ = false;    ///< finish() has ended the status line
  RecentMean recentLoss_{kLossWindow};
  int64_t lastStep_ = 0;
  double lastLoss_ = 0;
  int64_t rows_ = 0; ///< rows trained by this process
  std::optional<double> lossScale_;
  int64_t skippedSteps_ = 0;
};

} // namespace bertc
