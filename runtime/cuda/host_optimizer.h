// An offloaded optimizer (ZeRO-Offload) for the CUDA runner: the master weights and AdamW
// state stay in the host mirror of the arena (TrainerPlan::hostResident), and each
// optimizer step brings the gradients down into the mirror (page-locked), runs AdamW there
// on the host's cores (CudaSteps::hostUpdate) and takes the trainable parameters back up.
// Where no update depends on every gradient (no loss scaling, no clipping), the gradients
// come down during the last micro-step's backward instead: each as soon as the backward has
// completed it, on a copy stream, and a host thread updates each parameter as its gradient
// arrives while the device goes on with the backward.
#pragma once

#include "bertc/abi/trainer.h"
#include "bertc/runtime/cuda_step.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bertc::cuda {

class HostOptimizer final : public GradientStreamer {
public:
  /// `hostArena` is the mirror (the plan's whole arena), `deviceArena` the device's, and
  /// `stream` the one the steps run on.
  HostOptimizer(const TrainerPlan &plan, const CudaSteps &steps, std::byte *hostArena,
                std::byte *deviceArena, cudaStream_t stream);
  ~HostOptimizer() override;
  HostOptimizer(const HostOptimizer &) = delete;
  HostOptimizer &operator=(const HostOptimizer &) = delete;

  /// Whether the plan lets the gradients stream: no loss scaling, no clipping.
  bool streams() const { return streams_; }
  /// Streams the gradients of the micro-step about to run (the optimizer step's last),
  /// updating with `ctx`'s learning rate and AdamW step.
  void beginStreaming(const StepContext &ctx);
  void gradientComplete(size_t param) override;
  /// The optimizer step's update: every trainable parameter updated on the host (the
  /// streamed ones awaited, else after every gradient comes down), then queued up to the
  /// device on the steps' stream.
  void update(const StepContext &ctx);
  /// "host optimizer: N gradients of M brought down during the backward", for the run's end.
  std::string report() const;

private:
  /// `ctx` on the host arena.
  StepContext onHost(const StepContext &ctx) const;
  /// The worker thread: updates each queued parameter once its gradient is down.
  void work();
  /// Waits until the worker has updated every queued parameter; rethrows its error.
  void drain();

  const TrainerPlan &plan_;
  const CudaSteps &steps_;
  std::byte *host_;
  std::byte *device_;
  cudaStream_t stream_;
  bool streams_;
  cudaStream_t copyStream_ = nullptr;
  /// Per parameter (trainable ones only): its gradient complete on the steps' stream, and
  /// down in the mirror.
  std::vector<cudaEvent_t> complete_, down_;
  /// What the worker updates with, while a micro-step streams.
  StepContext streaming_{};
  bool streamedThisStep_ = false;
  std::vector<bool> streamed_; ///< per parameter: its gradient streamed this step
  size_t streamedGradients_ = 0, updatedGradients_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<size_t> queue_;
  size_t busy_ = 0; ///< queued or being updated
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

} // namespace bertc::cuda
