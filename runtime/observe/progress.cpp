// Progress display: the pure formatters (durations, bar, rates, the step, terminal and
// summary lines) and ProgressDisplay, which times the run and writes to the stream. A
// terminal's line is redrawn at most ten times a second (and at the last step), cut to the
// terminal's width so the carriage return always lands on the same line.
#include "bertc/runtime/progress.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sys/ioctl.h>
#include <unistd.h>

namespace bertc {
namespace {

/// Seconds between two redraws of the terminal line.
constexpr double kRedrawInterval = 0.1;

template <class... Values> std::string printed(const char *format, Values... values) {
  char text[256];
  std::snprintf(text, sizeof text, format, values...);
  return text;
}

/// Columns of the terminal behind `out`, 0 when unknown.
int terminalColumns(std::FILE *out) {
  winsize size{};
  if (::ioctl(fileno(out), TIOCGWINSZ, &size) != 0)
    return 0;
  return size.ws_col;
}

} // namespace

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  long long total = std::llround(seconds);
  if (total < 60)
    return printed("%llds", total);
  if (total < 3600)
    return printed("%lldm%02llds", total / 60, total % 60);
  long long minutes = total / 60;
  if (minutes < 24 * 60)
    return printed("%lldh%02lldm", minutes / 60, minutes % 60);
  long long hours = minutes / 60;
  return printed("%lldd%02lldh", hours / 24, hours % 24);
}

std::string formatBar(double fraction, int width) {
  double clamped = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 0.0;
  int filled = std::min(width, int(std::floor(clamped * width)));
  return std::string(size_t(filled), '#') + std::string(size_t(width - filled), '.');
}

std::string formatRate(double perSecond) {
  if (!std::isfinite(perSecond))
    return "?";
  const char *suffix = "";
  double value = std::max(perSecond, 0.0);
  for (const char *larger : {"k", "M"}) {
    if (value < 999.5)
      break;
    value /= 1000;
    suffix = larger;
  }
  int decimals = value < 9.995 ? 2 : value < 99.95 ? 1 : 0;
  return printed("%.*f%s", decimals, value, suffix);
}

void RecentMean::push(double value) {
  values_[next_] = value;
  next_ = (next_ + 1) % values_.size();
  count_ = std::min(count_ + 1, values_.size());
}

double RecentMean::mean() const {
  if (count_ == 0)
    return 0.0;
  return std::accumulate(values_.begin(), values_.begin() + std::ptrdiff_t(count_), 0.0) /
         double(count_);
}

/// "  scale 32768 (2 skipped)" with fp16 loss scaling, else "".
static std::string lossScaleText(const ProgressStatus &status) {
  if (!status.lossScale)
    return "";
  return printed("  scale %g (%lld skipped)", *status.lossScale,
                 static_cast<long long>(status.skippedSteps));
}

std::string formatStepLine(const ProgressStatus &status) {
  return printed("step %lld/%lld  loss %.6f  lr %.2e  epoch %lld  %s samples/s  ETA %s",
                 static_cast<long long>(status.step), static_cast<long long>(status.totalSteps),
                 status.loss, status.lr, static_cast<long long>(status.epoch),
                 formatRate(status.samplesPerSecond).c_str(),
                 formatDuration(status.etaSeconds).c_str()) +
         lossScaleText(status);
}

std::string formatTerminalLine(const ProgressStatus &status, int barWidth) {
  double fraction = status.totalSteps > 0 ? double(status.step) / double(status.totalSteps) : 1.0;
  return printed("step %lld/%lld [%s] %3d%%  epoch %lld  loss %.4f  lr %.2e  %s samples/s  "
                 "ETA %s",
                 static_cast<long long>(status.step), static_cast<long long>(status.totalSteps),
                 formatBar(fraction, barWidth).c_str(), int(std::floor(100 * fraction)),
                 static_cast<long long>(status.epoch), status.loss, status.lr,
                 formatRate(status.samplesPerSecond).c_str(),
                 formatDuration(status.etaSeconds).c_str()) +
         lossScaleText(status);
}

std::string formatSummary(const RunSummary &summary) {
  std::string text = printed("done: step %lld/%lld", static_cast<long long>(summary.lastStep),
                             static_cast<long long>(summary.totalSteps));
  if (summary.startStep > 0)
    text += printed(" (resumed at step %lld)", static_cast<long long>(summary.startStep));
  if (summary.lastStep == summary.startStep)
    return text + ", nothing to train";
  std::string seconds =
      summary.seconds < 60 ? printed("%.2fs", summary.seconds) : formatDuration(summary.seconds);
  return text + printed(", loss %.6f, padding %.1f%% of tokens, %s, %s samples/s", summary.lastLoss,
                        100 * summary.padFraction, seconds.c_str(),
                        formatRate(summary.samplesPerSecond).c_str());
}

ProgressDisplay::ProgressDisplay(ProgressMode mode, int64_t stepsDone, int64_t totalSteps,
                                 std::FILE *out)
    : mode_(mode), out_(out), startStep_(stepsDone), totalSteps_(totalSteps),
      start_(std::chrono::steady_clock::now()), lastStep_(stepsDone) {}

double ProgressDisplay::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressDisplay::step(int64_t step, int64_t epoch, float loss, float lr, int64_t rows) {
  rows_ += rows;
  lastStep_ = step;
  lastLoss_ = loss;
  recentLoss_.push(loss);
  if (mode_ == ProgressMode::Quiet)
    return;
  double seconds = elapsed();
  ProgressStatus status{step,
                        totalSteps_,
                        epoch,
                        loss,
                        lr,
                        double(rows_) / seconds,
                        double(totalSteps_ - step) * seconds / double(step - startStep_),
                        lossScale_,
                        skippedSteps_};
  if (mode_ == ProgressMode::Lines) {
    std::fprintf(out_, "%s\n", formatStepLine(status).c_str());
    std::fflush(out_);
    return;
  }
  status.loss = recentLoss_.mean();
  statusLine_ = formatTerminalLine(status, /*barWidth=*/20);
  lineIsStale_ = true;
  if (seconds - lastDraw_ >= kRedrawInterval || step == totalSteps_) {
    lastDraw_ = seconds;
    redraw();
  }
}

void ProgressDisplay::lossScale(std::optional<double> scale, int64_t skippedSteps) {
  lossScale_ = scale;
  skippedSteps_ = skippedSteps;
}

void ProgressDisplay::redraw() {
  int columns = terminalColumns(out_);
  size_t shown =
      columns > 1 ? std::min(statusLine_.size(), size_t(columns - 1)) : statusLine_.size();
  std::fprintf(out_, "\r%.*s\033[K", int(shown), statusLine_.c_str());
  std::fflush(out_);
  lineIsStale_ = false;
}

void ProgressDisplay::note(const std::string &message) {
  if (mode_ == ProgressMode::Quiet)
    return;
  if (mode_ == ProgressMode::Terminal && !statusLine_.empty())
    std::fprintf(out_, "\r\033[K");
  std::fprintf(out_, "%s\n", message.c_str());
  if (mode_ == ProgressMode::Terminal && !statusLine_.empty())
    redraw();
  std::fflush(out_);
}

/// Ends the terminal's status line, drawn at the last step, once.
void ProgressDisplay::endStatusLine() {
  if (finished_)
    return;
  finished_ = true;
  if (mode_ != ProgressMode::Terminal || statusLine_.empty())
    return;
  if (lineIsStale_)
    redraw();
  std::fputc('\n', out_);
  std::fflush(out_);
}

ProgressDisplay::~ProgressDisplay() { endStatusLine(); }

void ProgressDisplay::finish(double padFraction) {
  endStatusLine();
  double seconds = elapsed();
  std::fprintf(out_, "%s\n",
               formatSummary({startStep_, lastStep_, totalSteps_, lastLoss_, padFraction, seconds,
                              double(rows_) / seconds})
                   .c_str());
  std::fflush(out_);
}

} // namespace bertc
