// Mean squared error on the CPU: the regression head's loss (torch.nn.MSELoss on one
// prediction per row). The sum runs in double; the normalizer is the effective batch size,
// so the micro-batches of one optimizer step add up to the mean.
#include "bertc/runtime/cpu_kernels.h"

namespace bertc::cpu {

void mseLossForward(const float *predictions, const float *targets, float *loss, int64_t rows,
                    float normalizer) {
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const double error = double(predictions[r]) - double(targets[r]);
    total += error * error;
  }
  *loss = float(total / double(normalizer));
}

void mseLossBackward(const float *dloss, const float *predictions, const float *targets,
                     float *dpredictions, int64_t rows, float normalizer) {
  const double scale = 2.0 * double(*dloss) / double(normalizer);
  for (int64_t r = 0; r < rows; ++r)
    dpredictions[r] = float(scale * (double(predictions[r]) - double(targets[r])));
}

} // namespace bertc::cpu
