// The CPU target's StepRunner (step_runner.h): the generated steps run on the host arena
// itself, so nothing moves; the arena is one 64-byte aligned allocation.
#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/step_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bertc {
namespace {

class CpuStepRunner final : public StepRunner {
public:
  CpuStepRunner(const TrainerPlan &plan, const CpuSteps &steps) : StepRunner(plan), steps_(steps) {
    size_t bytes = (std::max<size_t>(plan_.arenaBytes, 1) + 63) / 64 * 64;
    arena_ = static_cast<std::byte *>(std::aligned_alloc(64, bytes));
    if (!arena_) {
      char gib[32];
      std::snprintf(gib, sizeof gib, "%.2f", double(bytes) / double(1u << 30));
      throw ArenaAllocationError("cannot allocate the arena: " + std::to_string(bytes) +
                                 " bytes (" + gib + " GiB) needed");
    }
  }
  ~CpuStepRunner() override { std::free(arena_); }

  std::byte *hostArena() override { return arena_; }
  void pushState() override {}
  void pullState() override {}

  void zeroGradients() override {
    std::memset(arena_ + plan_.gradients.offset, 0, plan_.gradients.bytes);
  }

  float microStep(StepContext &ctx) override {
    bind(ctx);
    steps_.microStep(ctx);
    return loss();
  }

  float evalStep(StepContext &ctx, float *logits) override {
    bind(ctx);
    steps_.evalStep(ctx, logits);
    return loss();
  }

  std::string memoryReport() override { return ""; }

protected:
  bool unscaleGradients(float inverseScale) override {
    return cpu::unscaleGradients(gradients(), gradientCount(), inverseScale);
  }
  float clipGradients(float maxNorm) override {
    float squared = cpu::squaredNorm(gradients(), gradientCount());
    cpu::clipByGlobalNorm(gradients(), gradientCount(), squared, maxNorm);
    return std::sqrt(squared);
  }
  void applyUpdate(StepContext &ctx) override {
    bind(ctx);
    steps_.optimizerStep(ctx);
  }

private:
  float *gradients() const { return reinterpret_cast<float *>(arena_ + plan_.gradients.offset); }
  int64_t gradientCount() const { return int64_t(plan_.gradients.bytes / sizeof(float)); }
  void bind(StepContext &ctx) const {
    ctx.arena = arena_;
    ctx.scratch = reinterpret_cast<float *>(arena_ + plan_.scratch.offset);
  }
  float loss() const {
    float value;
    std::memcpy(&value, arena_ + plan_.inputs.loss, sizeof value);
    return value;
  }

  const CpuSteps &steps_;
  std::byte *arena_ = nullptr;
};

} // namespace

void requireRunnableDevice(const Trainer &) {}

std::unique_ptr<StepRunner> makeStepRunner(const Trainer &trainer) {
  if (!trainer.cpu)
    throw std::runtime_error("this trainer was built for the cuda target but linked with the "
                             "CPU target's runtime: rebuild it with bertc");
  return std::make_unique<CpuStepRunner>(*trainer.plan, *trainer.cpu);
}

} // namespace bertc
