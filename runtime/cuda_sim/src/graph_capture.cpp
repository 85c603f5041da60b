// Stream capture (graph_capture.h): cudaStreamBeginCapture, cudaStreamEndCapture and
// cudaStreamIsCapturing, and the checks the other calls make against captures in progress.
#include "graph_capture.h"

#include "runtime_errors.h"
#include "streams.h"

#include <map>
#include <thread>

namespace bertc::sim {

namespace {

struct Capture {
  cudaStreamCaptureMode mode;
  std::thread::id thread; ///< the thread that began it
  bool invalidated = false;
  std::unique_ptr<CUgraph_st> graph = std::make_unique<CUgraph_st>();
};

std::map<cudaStream_t, Capture> &captures() {
  static std::map<cudaStream_t, Capture> inProgress;
  return inProgress;
}

Capture *captureOf(cudaStream_t stream) {
  auto found = captures().find(stream);
  return found == captures().end() ? nullptr : &found->second;
}

} // namespace

cudaError_t submit(cudaStream_t stream, cudaGraphNodeType type, std::function<void()> work) {
  Capture *capture = captureOf(stream);
  if (!capture) {
    work();
    return cudaSuccess;
  }
  if (capture->invalidated)
    return recordResult(cudaErrorStreamCaptureInvalidated);
  capture->graph->nodes.push_back(
      std::make_unique<CUgraphNode_st>(CUgraphNode_st{type, std::move(work)}));
  return cudaSuccess;
}

bool isCapturing(cudaStream_t stream) { return captureOf(stream) != nullptr; }

cudaError_t refuseOnCapturingStream(cudaStream_t stream) {
  Capture *capture = captureOf(stream);
  if (!capture)
    return cudaSuccess;
  capture->invalidated = true;
  return recordResult(cudaErrorStreamCaptureUnsupported);
}

cudaError_t refuseUnsafeCall() {
  cudaError_t result = cudaSuccess;
  for (auto &[stream, capture] : captures()) {
    const bool forbids = capture.mode == cudaStreamCaptureModeGlobal ||
                         (capture.mode == cudaStreamCaptureModeThreadLocal &&
                          capture.thread == std::this_thread::get_id());
    if (forbids) {
      capture.invalidated = true;
      result = cudaErrorStreamCaptureUnsupported;
    }
  }
  return recordResult(result);
}

void forgetCapture(cudaStream_t stream) { captures().erase(stream); }

} // namespace bertc::sim

using namespace bertc::sim;

// The legacy default stream cannot be captured; a stream captures one sequence at a time.
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!isValidStream(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  if (unsigned(mode) > cudaStreamCaptureModeRelaxed)
    return recordResult(cudaErrorInvalidValue);
  if (!stream)
    return recordResult(cudaErrorStreamCaptureUnsupported);
  if (isCapturing(stream))
    return recordResult(cudaErrorIllegalState);
  captures().emplace(stream, Capture{mode, std::this_thread::get_id()});
  return cudaSuccess;
}

// Only the thread that began a capture may end it, unless the capture is relaxed. An
// invalidated capture ends with no graph.
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!graph)
    return recordResult(cudaErrorInvalidValue);
  if (!isValidStream(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  Capture *capture = captureOf(stream);
  if (!capture)
    return recordResult(cudaErrorIllegalState);
  if (capture->mode != cudaStreamCaptureModeRelaxed &&
      capture->thread != std::this_thread::get_id())
    return recordResult(cudaErrorStreamCaptureWrongThread);
  const bool invalidated = capture->invalidated;
  *graph = invalidated ? nullptr : capture->graph.release();
  if (*graph)
    adoptGraph(*graph);
  captures().erase(stream);
  return invalidated ? recordResult(cudaErrorStreamCaptureInvalidated) : cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus *status) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!status)
    return recordResult(cudaErrorInvalidValue);
  if (!isValidStream(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  const Capture *capture = captureOf(stream);
  *status = !capture               ? cudaStreamCaptureStatusNone
            : capture->invalidated ? cudaStreamCaptureStatusInvalidated
                                   : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}
