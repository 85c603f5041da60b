// Hugging Face learning-rate schedules. Like torch's LambdaLR, the factor and the product
// with the base rate are computed in double; only the result is rounded to fp32, the
// precision the optimizer kernels take.
#include "bertc/runtime/schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bertc {

int64_t warmupSteps(float warmupFraction, int64_t totalSteps) {
  // The fraction was a decimal in the TOML file; fp32 keeps 6 significant digits of it, so
  // "%.6g" recovers the decimal and strtod gives the double Python would have used.
  char decimal[32];
  std::snprintf(decimal, sizeof decimal, "%.6g", double(warmupFraction));
  return int64_t(std::ceil(double(totalSteps) * std::strtod(decimal, nullptr)));
}

float scheduledLr(LrSchedule schedule, float baseLr, int64_t step, int64_t totalSteps,
                  int64_t warmup) {
  if (schedule == LrSchedule::Constant)
    return baseLr;
  int64_t s = step - 1;
  double factor;
  if (s < warmup)
    factor = double(s) / double(std::max<int64_t>(1, warmup));
  else
    factor =
        std::max(0.0, double(totalSteps - s) / double(std::max<int64_t>(1, totalSteps - warmup)));
  return float(double(baseLr) * factor);
}

} // namespace bertc
