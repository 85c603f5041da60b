// The CUDA runner's offloaded optimizer (host_optimizer.h).
#include "host_optimizer.h"

#include "bertc/runtime/cuda_check.h"

#include <utility>

namespace bertc::cuda {

namespace {

/// Bytes of a parameter's working copy.
size_t storageBytes(const ParamSlot &param) {
  return size_t(param.numel) * (param.storage == StorageType::F32 ? 4 : 2);
}

/// Bytes of a parameter's fp32 gradient.
size_t gradientBytes(const ParamSlot &param) { return size_t(param.numel) * sizeof(float); }

} // namespace

HostOptimizer::HostOptimizer(const TrainerPlan &plan, const CudaSteps &steps, std::byte *hostArena,
                             std::byte *deviceArena, cudaStream_t stream)
    : plan_(plan), steps_(steps), host_(hostArena), device_(deviceArena), stream_(stream),
      streams_(!plan.lossScaling && plan.train.maxGradNorm <= 0),
      complete_(plan.numParams, nullptr), down_(plan.numParams, nullptr),
      streamed_(plan.numParams, false) {
  // The ranges copied every step are page-locked, so the copies run asynchronously.
  for (const ArenaRegion &region : {plan_.gradients, plan_.parameters})
    if (region.bytes > 0)
      BERTC_CUDA_CHECK(
          cudaHostRegister(host_ + region.offset, region.bytes, cudaHostRegisterDefault));
  BERTC_CUDA_CHECK(cudaStreamCreateWithFlags(&copyStream_, cudaStreamNonBlocking));
  for (size_t p = 0; p < plan_.numParams; ++p)
    if (plan_.params[p].trainable)
      for (std::vector<cudaEvent_t> *events : {&complete_, &down_})
        BERTC_CUDA_CHECK(cudaEventCreateWithFlags(&(*events)[p], cudaEventDisableTiming));
  worker_ = std::thread([this] { work(); });
}

// Released without checks: a teardown after an error must not throw again.
HostOptimizer::~HostOptimizer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  worker_.join();
  for (std::vector<cudaEvent_t> *events : {&complete_, &down_})
    for (cudaEvent_t event : *events)
      if (event)
        (void)cudaEventDestroy(event);
  (void)cudaStreamDestroy(copyStream_);
  for (const ArenaRegion &region : {plan_.gradients, plan_.parameters})
    if (region.bytes > 0)
      (void)cudaHostUnregister(host_ + region.offset);
}

StepContext HostOptimizer::onHost(const StepContext &ctx) const {
  StepContext host = ctx;
  host.arena = host_;
  host.scratch = nullptr;
  host.planCheck = nullptr;
  return host;
}

void HostOptimizer::beginStreaming(const StepContext &ctx) {
  std::lock_guard<std::mutex> lock(mutex_);
  streaming_ = onHost(ctx);
  streamedThisStep_ = true;
  streamed_.assign(plan_.numParams, false);
}

void HostOptimizer::gradientComplete(size_t param) {
  const ParamSlot &slot = plan_.params[param];
  // The copy stream waits for the backward to have completed the gradient, brings it
  // down, and marks it down for the worker.
  BERTC_CUDA_CHECK(cudaEventRecord(complete_[param], stream_));
  BERTC_CUDA_CHECK(cudaStreamWaitEvent(copyStream_, complete_[param], 0));
  BERTC_CUDA_CHECK(cudaMemcpyAsync(host_ + slot.gradOffset, device_ + slot.gradOffset,
                                   gradientBytes(slot), cudaMemcpyDeviceToHost, copyStream_));
  BERTC_CUDA_CHECK(cudaEventRecord(down_[param], copyStream_));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(param);
    ++busy_;
    ++streamedGradients_;
    streamed_[param] = true;
  }
  wake_.notify_one();
}

void HostOptimizer::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty())
      return; // stopping, with nothing left
    size_t param = queue_.front();
    queue_.pop_front();
    StepContext ctx = streaming_;
    lock.unlock();
    try {
      BERTC_CUDA_CHECK(cudaEventSynchronize(down_[param]));
      steps_.hostUpdate(ctx, param);
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      lock.unlock();
    }
    lock.lock();
    if (--busy_ == 0)
      idle_.notify_all();
  }
}

void HostOptimizer::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return busy_ == 0; });
  if (std::exception_ptr error = std::exchange(error_, nullptr))
    std::rethrow_exception(error);
}

void HostOptimizer::update(const StepContext &ctx) {
  // Every trainable parameter is updated once: the streamed ones by the worker, the rest
  // (all of them when nothing streamed) here, after their gradients come down.
  bool streamed = std::exchange(streamedThisStep_, false);
  if (streamed)
    drain();
  std::vector<size_t> rest;
  for (size_t p = 0; p < plan_.numParams; ++p)
    if (plan_.params[p].trainable && !(streamed && streamed_[p]))
      rest.push_back(p);
  // Down: the whole gradient region, or the few gradients nothing streamed.
  if (!streamed)
    BERTC_CUDA_CHECK(cudaMemcpyAsync(host_ + plan_.gradients.offset,
                                     device_ + plan_.gradients.offset, plan_.gradients.bytes,
                                     cudaMemcpyDeviceToHost, stream_));
  else
    for (size_t p : rest)
      BERTC_CUDA_CHECK(
          cudaMemcpyAsync(host_ + plan_.params[p].gradOffset, device_ + plan_.params[p].gradOffset,
                          gradientBytes(plan_.params[p]), cudaMemcpyDeviceToHost, stream_));
  BERTC_CUDA_CHECK(cudaStreamSynchronize(stream_));
  StepContext host = onHost(ctx);
  for (size_t p : rest)
    steps_.hostUpdate(host, p);
  for (size_t p = 0; p < plan_.numParams; ++p)
    if (const ParamSlot &param = plan_.params[p]; param.trainable) {
      BERTC_CUDA_CHECK(cudaMemcpyAsync(device_ + param.offset, host_ + param.offset,
                                       storageBytes(param), cudaMemcpyHostToDevice, stream_));
      ++updatedGradients_;
    }
}

std::string HostOptimizer::report() const {
  return "host optimizer: " + std::to_string(streamedGradients_) + " gradients of " +
         std::to_string(updatedGradients_) + " brought down during the backward";
}

} // namespace bertc::cuda
