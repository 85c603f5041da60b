// DynamicLossScaler's update rule (torch.cuda.amp.GradScaler.update with backoff factor 0.5
// and growth factor 2).
#include "bertc/runtime/loss_scaler.h"

namespace bertc {

bool DynamicLossScaler::update(bool gradientsFinite) {
  if (!gradientsFinite) {
    scale_ *= 0.5f;
    goodStepsInRow_ = 0;
    ++skipped_;
    return false;
  }
  if (++goodStepsInRow_ == growthInterval_) {
    scale_ *= 2.0f;
    goodStepsInRow_ = 0;
  }
  return true;
}

} // namespace bertc
