// Stream handles, and the copies and fills queued on them (streams.h), which a capturing
// stream records (graph_capture.h).
#include "streams.h"

#include "graph_capture.h"

#include "runtime_errors.h"

#include "bertc/cuda_sim/device_memory.h"

#include <cstring>
#include <memory>
#include <set>

struct CUstream_st {
  unsigned flags;
};

namespace bertc::sim {

namespace {
std::set<cudaStream_t> &liveStreams() {
  static std::set<cudaStream_t> streams;
  return streams;
}

/// Whether a copy of `kind` may read `from` and write `to` (cudaMemcpyDefault infers the
/// direction from the addresses, as unified addressing does).
bool copyAllowed(void *to, const void *from, size_t bytes, cudaMemcpyKind kind) {
  const bool toDevice = isDeviceRange(to, bytes), fromDevice = isDeviceRange(from, bytes);
  switch (kind) {
  case cudaMemcpyHostToHost:
    return true;
  case cudaMemcpyHostToDevice:
    return toDevice;
  case cudaMemcpyDeviceToHost:
    return fromDevice;
  case cudaMemcpyDeviceToDevice:
    return toDevice && fromDevice;
  case cudaMemcpyDefault:
    return true;
  }
  return false;
}

/// Host memory that is not page-locked, which no graph's copy may use.
bool isPageable(const void *pointer, size_t bytes) {
  return !isDeviceRange(pointer, bytes) && !isRegisteredHostRange(pointer, bytes);
}
} // namespace

bool isValidStream(cudaStream_t stream) {
  return stream == nullptr || liveStreams().count(stream) != 0;
}

} // namespace bertc::sim

using namespace bertc::sim;

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!stream || flags > cudaStreamNonBlocking)
    return recordResult(cudaErrorInvalidValue);
  *stream = new CUstream_st{flags};
  liveStreams().insert(*stream);
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream || !liveStreams().erase(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  forgetCapture(stream);
  delete stream;
  return stickyError();
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (!isValidStream(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  if (cudaError_t refused = refuseOnCapturingStream(stream))
    return refused;
  return stickyError();
}

cudaError_t cudaDeviceSynchronize() {
  if (cudaError_t refused = refuseUnsafeCall())
    return refused;
  return stickyError();
}

cudaError_t cudaMemcpyAsync(void *to, const void *from, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!isValidStream(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  if (unsigned(kind) > cudaMemcpyDefault)
    return recordResult(cudaErrorInvalidMemcpyDirection);
  if (bytes == 0)
    return cudaSuccess;
  if (!to || !from || !copyAllowed(to, from, bytes, kind))
    return recordResult(cudaErrorInvalidValue);
  if (isPageable(to, bytes) || isPageable(from, bytes))
    if (cudaError_t refused = refuseOnCapturingStream(stream))
      return refused;
  return submit(stream, cudaGraphNodeTypeMemcpy, [=] { std::memmove(to, from, bytes); });
}

cudaError_t cudaMemcpy(void *to, const void *from, size_t bytes, cudaMemcpyKind kind) {
  if (cudaError_t refused = refuseUnsafeCall())
    return refused;
  return cudaMemcpyAsync(to, from, bytes, kind, nullptr);
}

cudaError_t cudaMemsetAsync(void *pointer, int value, size_t bytes, cudaStream_t stream) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!isValidStream(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  if (bytes == 0)
    return cudaSuccess;
  if (!isDeviceRange(pointer, bytes))
    return recordResult(cudaErrorInvalidValue);
  return submit(stream, cudaGraphNodeTypeMemset, [=] { std::memset(pointer, value, bytes); });
}

cudaError_t cudaMemset(void *pointer, int value, size_t bytes) {
  if (cudaError_t refused = refuseUnsafeCall())
    return refused;
  return cudaMemsetAsync(pointer, value, bytes, nullptr);
}
