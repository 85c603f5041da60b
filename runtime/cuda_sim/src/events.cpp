// Events on the simulated device. Launches and copies run when they are queued, so every
// event is complete once recorded, and a wait on one, by the host or by a stream, returns
// at once (as CUDA's does on an event never recorded).
#include "runtime_errors.h"
#include "streams.h"

#include <set>

struct CUevent_st {};

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
  *event = new CUevent_st;
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
