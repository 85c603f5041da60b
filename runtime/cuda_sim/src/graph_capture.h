// Stream capture on the simulated device: every operation queued on a stream goes through
// submit(), which records it into the stream's capture, when one is in progress, instead of
// running it. Graphs are the recorded nodes in order (a stream is in-order, so a captured
// graph is a chain); executable graphs keep copies of them (graph_exec.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

/// One operation: its type and the work it does, with its parameters bound at capture.
struct CUgraphNode_st {
  cudaGraphNodeType type;
  std::function<void()> work;
};

struct CUgraph_st {
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
};

namespace bertc::sim {

/// Runs `work` now, or records it as a node of `type` when `stream` captures. Fails with
/// cudaErrorStreamCaptureInvalidated when the stream's capture has been invalidated.
cudaError_t submit(cudaStream_t stream, cudaGraphNodeType type, std::function<void()> work);

/// Whether `stream` has a capture in progress (valid or invalidated).
bool isCapturing(cudaStream_t stream);

/// For an operation on `stream` that no capture may hold (a synchronisation, a copy with
/// pageable memory): when the stream captures, invalidates the capture and returns
/// cudaErrorStreamCaptureUnsupported; otherwise cudaSuccess.
cudaError_t refuseOnCapturingStream(cudaStream_t stream);

/// For a call CUDA calls potentially unsafe (synchronous copies and fills, allocation,
/// device synchronisation): when a global capture, or a thread-local one of the calling
/// thread, is in progress, invalidates it and returns cudaErrorStreamCaptureUnsupported.
cudaError_t refuseUnsafeCall();

/// Makes a graph that a capture produced a live handle (graph_exec.cpp keeps them).
void adoptGraph(cudaGraph_t graph);

/// Ends any capture of a stream being destroyed.
void forgetCapture(cudaStream_t stream);

} // namespace bertc::sim
