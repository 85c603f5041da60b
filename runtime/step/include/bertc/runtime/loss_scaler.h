// Dynamic loss scaling for fp16 training, as torch.cuda.amp.GradScaler does it: the
// backward's seed is multiplied by the scale so that small gradients survive fp16; before
// each optimizer step the gradients are unscaled and checked (cpu::unscaleGradients). A step
// whose gradients overflowed is skipped and the scale halved; after `growthInterval`
// consecutive good steps the scale doubles.
#pragma once

#include <cstdint>

namespace bertc {

class DynamicLossScaler {
public:
  /// GradScaler's defaults: init_scale 2^16, growth_interval 2000.
  static constexpr float kInitialScale = 65536.0f;
  static constexpr int64_t kGrowthInterval = 2000;

  explicit DynamicLossScaler(float initialScale = kInitialScale,
                             int64_t growthInterval = kGrowthInterval)
      : scale_(initialScale), growthInterval_(growthInterval) {}

  /// What a checkpoint keeps, so that a resumed run scales as the uninterrupted one.
  struct State {
    float scale = kInitialScale;
    int64_t goodStepsInRow = 0;
    int64_t skipped = 0;
  };
  State state() const { return {scale_, goodStepsInRow_, skipped_}; }
  void restore(const State &state) {
    scale_ = state.scale;
    goodStepsInRow_ = state.goodStepsInRow;
    skipped_ = state.skipped;
  }

  /// The scale the next step's backward uses.
  float scale() const { return scale_; }
  /// Steps skipped so far because their gradients overflowed.
  int64_t skippedSteps() const { return skipped_; }

  /// Records whether this step's gradients were all finite and adjusts the scale; returns
  /// whether the optimizer may apply them.
  bool update(bool gradientsFinite);

private:
  float scale_;
  int64_t growthInterval_;
  int64_t goodStepsInRow_ = 0;
  int64_t skipped_ = 0;
};

} // namespace bertc
