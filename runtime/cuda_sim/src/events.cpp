// Events on the simulated device. Launches and copies run when they are queued, so every
// event is complete once recorded, and a wait on one, by the host or by a stream, returns
// at once (as CUDA's does on an event never recorded). A timing event keeps the host time
// of its last record, so the time between two is what the work queued between them took.
#include "runtime_errors.h"
#include "streams.h"

#include <chrono>
#include <optional>
#include <set>

struct CUevent_st {
  bool timing;
  std::optional<std::chrono::steady_clock::time_point> recordedAt;
};

namespace {

/// The live events. cudaEventSynchronize, which other host threads call, only reads the
/// event it is given, never this set.
std::set<cudaEvent_t> &liveEvents() {
  static std::set<cudaEvent_t> events;
  return events;
}

bool isLive(cudaEvent_t event) { return event && liveEvents().count(event) != 0; }

} // namespace

using namespace bertc::sim;

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!event || (flags & ~unsigned(cudaEventDisableTiming)) != 0)
    return recordResult(cudaErrorInvalidValue);
  *event = new CUevent_st{(flags & cudaEventDisableTiming) == 0, std::nullopt};
  liveEvents().insert(*event);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!isLive(event))
    return recordResult(cudaErrorInvalidResourceHandle);
  liveEvents().erase(event);
  delete event;
  return stickyError();
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!isLive(event) || !isValidStream(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  event->recordedAt = std::chrono::steady_clock::now();
  return cudaSuccess;
}

// As CUDA: both events must take timing and have been recorded.
cudaError_t cudaEventElapsedTime(float *milliseconds, cudaEvent_t start, cudaEvent_t end) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!milliseconds)
    return recordResult(cudaErrorInvalidValue);
  if (!isLive(start) || !isLive(end) || !start->timing || !end->timing || !start->recordedAt ||
      !end->recordedAt)
    return recordResult(cudaErrorInvalidResourceHandle);
  *milliseconds =
      std::chrono::duration<float, std::milli>(*end->recordedAt - *start->recordedAt).count();
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return event ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!isLive(event) || !isValidStream(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  if (flags != 0)
    return recordResult(cudaErrorInvalidValue);
  return cudaSuccess;
}
