// Where a timed trainer's steps spend their time (bertc --time-ops): the op timer the
// generated micro-step reports each op to (trainer.h's OpTimer), which the driver also
// wraps around the gradients' zeroing and the optimizer step. Measurements are summed per
// name; a runner supplies the clock: the host's for the CPU target, events on the stream
// for the CUDA target (StepRunner::makeOpTimes).
#pragma once

#include "bertc/abi/trainer.h"

#include <map>
#include <string>
#include <vector>

namespace bertc {

/// What one name's ops took over the measured optimizer steps.
struct OpTotal {
  std::string op;
  int64_t runs = 0;
  double seconds = 0;
};

class OpTimes : public OpTimer {
public:
  virtual ~OpTimes() = default;

  /// Takes in every measurement of the optimizer step that just ended (a device's events
  /// are read once they complete); `counted` false drops them (the warm-up step).
  void finishStep(bool counted);
  /// Optimizer steps whose measurements are in totals().
  int64_t steps() const { return steps_; }
  /// Every name's total, longest first.
  std::vector<OpTotal> totals() const;

protected:
  /// The step's measurements so far, as (name, seconds) pairs, then none.
  virtual std::vector<std::pair<std::string, double>> takeMeasurements() = 0;

private:
  std::map<std::string, OpTotal> totals_;
  int64_t steps_ = 0;
};

/// Op times on the host's steady clock (the CPU target, whose ops run as they are called).
class HostOpTimes final : public OpTimes {
public:
  void begin(const char *op) override;
  void end() override;

private:
  std::vector<std::pair<std::string, double>> takeMeasurements() override;

  std::string current_;
  double startSeconds_ = 0;
  std::vector<std::pair<std::string, double>> measured_;
};

/// The table a timed run prints at its end: per optimizer step, each name's seconds, share
/// of the timed total, and runs.
std::string formatOpTimes(const OpTimes &times);

} // namespace bertc
