// The op timer's sums and the table a timed run prints (op_times.h).
#include "bertc/runtime/op_times.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

namespace bertc {

void OpTimes::finishStep(bool counted) {
  std::vector<std::pair<std::string, double>> measured = takeMeasurements();
  if (!counted)
    return;
  for (const auto &[op, seconds] : measured) {
    OpTotal &total = totals_[op];
    total.op = op;
    total.runs += 1;
    total.seconds += seconds;
  }
  ++steps_;
}

std::vector<OpTotal> OpTimes::totals() const {
  std::vector<OpTotal> totals;
  for (const auto &entry : totals_)
    totals.push_back(entry.second);
  std::stable_sort(totals.begin(), totals.end(),
                   [](const OpTotal &a, const OpTotal &b) { return a.seconds > b.seconds; });
  return totals;
}

namespace {
double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
} // namespace

void HostOpTimes::begin(const char *op) {
  current_ = op;
  startSeconds_ = steadySeconds();
}

void HostOpTimes::end() { measured_.emplace_back(current_, steadySeconds() - startSeconds_); }

std::vector<std::pair<std::string, double>> HostOpTimes::takeMeasurements() {
  return std::exchange(measured_, {});
}

std::string formatOpTimes(const OpTimes &times) {
  std::vector<OpTotal> totals = times.totals();
  double timed = 0;
  for (const OpTotal &total : totals)
    timed += total.seconds;
  double steps = double(std::max<int64_t>(times.steps(), 1));
  char line[256];
  std::snprintf(line, sizeof line,
                "op times: %lld optimizer step(s) measured (the first left out), %.6f s a step "
                "timed:\n  %10s  %6s  %8s  %s\n",
                static_cast<long long>(times.steps()), timed / steps, "seconds", "share", "runs",
                "op (all its runs in a step)");
  std::string text = line;
  for (const OpTotal &total : totals) {
    std::snprintf(line, sizeof line, "  %10.6f  %5.1f%%  %8lld  %s\n", total.seconds / steps,
                  timed > 0 ? 100 * total.seconds / timed : 0.0,
                  static_cast<long long>(double(total.runs) / steps), total.op.c_str());
    text += line;
  }
  return text;
}

} // namespace bertc
