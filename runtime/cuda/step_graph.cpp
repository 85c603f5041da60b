// StepGraph (step_graph.h): capture, update or instantiate, launch.
#include "step_graph.h"

#include "bertc/runtime/cuda_check.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

namespace bertc::cuda {

namespace {

struct GraphDestroy {
  void operator()(cudaGraph_t graph) const { (void)cudaGraphDestroy(graph); }
};
using Graph = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, GraphDestroy>;

} // namespace

std::string graphsDisabledReason() {
  const char *graphs = std::getenv("BERTC_CUDA_GRAPHS");
  if (graphs && std::strcmp(graphs, "0") == 0)
    return "BERTC_CUDA_GRAPHS=0";
  if (synchronousLaunches())
    return "BERTC_CUDA_SYNC_LAUNCHES";
  return "";
}

StepGraph::~StepGraph() {
  if (exec_)
    (void)cudaGraphExecDestroy(exec_);
}

// Thread-local capture: the offloaded optimizer's worker thread may still use the runtime
// while this thread captures, and only this thread's calls belong to the step.
void StepGraph::run(const std::function<void()> &queue) {
  BERTC_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  try {
    queue();
  } catch (...) {
    cudaGraph_t abandoned = nullptr; // ends the capture so the stream is usable after
    if (cudaStreamEndCapture(stream_, &abandoned) == cudaSuccess)
      (void)cudaGraphDestroy(abandoned);
    (void)cudaGetLastError();
    throw;
  }
  cudaGraph_t captured = nullptr;
  BERTC_CUDA_CHECK(cudaStreamEndCapture(stream_, &captured));
  install(captured);
  BERTC_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
  ++launches_;
}

/// Updates the executable graph with `graph`'s arguments, or replaces it when the update
/// is refused (its nodes differ); the captured graph itself is no longer needed after.
void StepGraph::install(cudaGraph_t graph) {
  Graph owner(graph);
  if (exec_) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(exec_, graph, &info) == cudaSuccess) {
      ++updates_;
      return;
    }
    (void)cudaGetLastError(); // the refusal is expected: do not fail the next launch check
    BERTC_CUDA_CHECK(cudaGraphExecDestroy(exec_));
    exec_ = nullptr;
  }
  BERTC_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph, 0));
  ++instantiations_;
}

std::string StepGraph::report() const {
  return "CUDA graphs: " + std::to_string(launches_) + " micro-steps replayed (" +
         std::to_string(instantiations_) + " instantiated, " + std::to_string(updates_) +
         " updated)";
}

} // namespace bertc::cuda
