// Softmax cross-entropy on the CPU. Each row's log-softmax is taken as
// logit - max - log(sum exp(logit - max)), so large logits neither overflow nor lose the
// label's term; sums run in double. Rows labelled outside [0, classes) are ignored, as
// PyTorch's ignore_index. The normalizer is the effective batch size, so the
// losses and gradients of the micro-batches of one optimizer step add up to the mean.
#include "bertc/runtime/cpu_kernels.h"

#include <algorithm>
#include <cmath>

namespace bertc::cpu {

namespace {
/// max over the row and log(sum exp(row - max)).
struct RowLogSumExp {
  float max;
  double logSumShifted;
};

RowLogSumExp rowLogSumExp(const float *row, int64_t classes) {
  float rowMax = row[0];
  for (int64_t c = 1; c < classes; ++c)
    rowMax = row[c] > rowMax ? row[c] : rowMax;
  double sum = 0.0;
  for (int64_t c = 0; c < classes; ++c)
    sum += std::exp(double(row[c]) - double(rowMax));
  return {rowMax, std::log(sum)};
}

/// A label outside [0, classes): -100 (PyTorch's ignore_index) or a clamped span position.
bool isIgnored(int32_t label, int64_t classes) { return label < 0 || label >= classes; }
} // namespace

void crossEntropyForward(const float *logits, const int32_t *labels, float *loss, int64_t batch,
                         int64_t classes, float normalizer) {
  double total = 0.0;
  for (int64_t b = 0; b < batch; ++b) {
    if (isIgnored(labels[b], classes))
      continue;
    const float *row = logits + b * classes;
    const RowLogSumExp lse = rowLogSumExp(row, classes);
    total += lse.logSumShifted - (double(row[labels[b]]) - double(lse.max));
  }
  *loss = float(total / double(normalizer));
}

void crossEntropyBackward(const float *dloss, const float *logits, const int32_t *labels,
                          float *dlogits, int64_t batch, int64_t classes, float normalizer) {
  const double rowScale = double(*dloss) / double(normalizer);
  for (int64_t b = 0; b < batch; ++b) {
    const float *row = logits + b * classes;
    float *gradRow = dlogits + b * classes;
    if (isIgnored(labels[b], classes)) {
      std::fill(gradRow, gradRow + classes, 0.0f);
      continue;
    }
    const RowLogSumExp lse = rowLogSumExp(row, classes);
    for (int64_t c = 0; c < classes; ++c) {
      const double prob = std::exp(double(row[c]) - double(lse.max) - lse.logSumShifted);
      const double target = c == labels[b] ? 1.0 : 0.0;
      gradRow[c] = float(rowScale * (prob - target));
    }
  }
}

} // namespace bertc::cpu
