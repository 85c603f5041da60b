// A micro-step's launches replayed as one CUDA graph. The generated kernels take the
// step's values (batch, sequence length, dropout key) as arguments, so one capture cannot
// serve every step; instead each step is captured anew, which only records the launches,
// and the executable graph is updated with it (same nodes, new arguments: cheap) or,
// when the nodes differ (the first step, another batch shape), instantiated again.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>

namespace bertc::cuda {

/// Whether micro-steps run as graphs: not under BERTC_CUDA_GRAPHS=0, nor under
/// BERTC_CUDA_SYNC_LAUNCHES (its wait after every launch cannot be captured). The reason
/// when not, else empty.
std::string graphsDisabledReason();

class StepGraph {
public:
  explicit StepGraph(cudaStream_t stream) : stream_(stream) {}
  ~StepGraph();
  StepGraph(const StepGraph &) = delete;
  StepGraph &operator=(const StepGraph &) = delete;

  /// Captures what `queue` queues on the stream (nothing may synchronise or copy with
  /// pageable host memory), updates or instantiates the executable graph, and launches it.
  void run(const std::function<void()> &queue);

  /// "CUDA graphs: 20 micro-steps replayed (1 instantiated, 19 updated)".
  std::string report() const;

private:
  void install(cudaGraph_t graph);

  cudaStream_t stream_;
  cudaGraphExec_t exec_ = nullptr;
  size_t launches_ = 0, instantiations_ = 0, updates_ = 0;
};

} // namespace bertc::cuda
