// Graphs and executable graphs: an executable graph holds its own copies of a captured
// graph's nodes, which cudaGraphExecUpdate replaces when the new graph has the same nodes
// in the same order, and which cudaGraphLaunch runs in order on a stream (or records, as
// one child-graph node, on a capturing stream).
#include "graph_capture.h"

#include "runtime_errors.h"
#include "streams.h"

#include <algorithm>
#include <memory>
#include <set>

/// The nodes are shared with the launches queued from them, so a launch copies nothing and
/// an update (which replaces them) leaves queued launches as they were.
struct CUgraphExec_st {
  std::shared_ptr<const std::vector<CUgraphNode_st>> nodes;
};

namespace {

std::set<cudaGraph_t> &liveGraphs() {
  static std::set<cudaGraph_t> graphs;
  return graphs;
}
std::set<cudaGraphExec_t> &liveExecs() {
  static std::set<cudaGraphExec_t> execs;
  return execs;
}

bool isLive(cudaGraph_t graph) { return graph && liveGraphs().count(graph) != 0; }
bool isLive(cudaGraphExec_t exec) { return exec && liveExecs().count(exec) != 0; }

std::shared_ptr<const std::vector<CUgraphNode_st>> copyNodes(const CUgraph_st &graph) {
  auto nodes = std::make_shared<std::vector<CUgraphNode_st>>();
  nodes->reserve(graph.nodes.size());
  for (const auto &node : graph.nodes)
    nodes->push_back(*node);
  return nodes;
}

} // namespace

namespace bertc::sim {

// cudaStreamEndCapture makes graphs; this is how they become live handles.
void adoptGraph(cudaGraph_t graph) { liveGraphs().insert(graph); }

} // namespace bertc::sim

using namespace bertc::sim;

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes) {
  if (!isLive(graph) || !numNodes)
    return recordResult(cudaErrorInvalidValue);
  if (nodes)
    for (size_t i = 0; i < std::min(*numNodes, graph->nodes.size()); ++i)
      nodes[i] = graph->nodes[i].get();
  if (!nodes || *numNodes > graph->nodes.size())
    *numNodes = graph->nodes.size();
  return cudaSuccess;
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType *type) {
  if (!node || !type)
    return recordResult(cudaErrorInvalidValue);
  *type = node->type;
  return cudaSuccess;
}

// Only the default flags: the simulation has no device launch, upload or auto-free.
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *graphExec, cudaGraph_t graph,
                                 unsigned long long flags) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!graphExec || !isLive(graph) || flags != 0)
    return recordResult(cudaErrorInvalidValue);
  *graphExec = new CUgraphExec_st{copyNodes(*graph)};
  liveExecs().insert(*graphExec);
  return cudaSuccess;
}

// As CUDA: another node count is a topology change; a node of another type at the same
// place, a node type change. Either leaves graphExec as it was.
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t graphExec, cudaGraph_t graph,
                                cudaGraphExecUpdateResultInfo *resultInfo) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!isLive(graphExec) || !isLive(graph) || !resultInfo)
    return recordResult(cudaErrorInvalidValue);
  *resultInfo = {cudaGraphExecUpdateSuccess, nullptr, nullptr};
  if (graph->nodes.size() != graphExec->nodes->size()) {
    resultInfo->result = cudaGraphExecUpdateErrorTopologyChanged;
    return recordResult(cudaErrorGraphExecUpdateFailure);
  }
  for (size_t i = 0; i < graph->nodes.size(); ++i)
    if (graph->nodes[i]->type != (*graphExec->nodes)[i].type) {
      *resultInfo = {cudaGraphExecUpdateErrorNodeTypeChanged, graph->nodes[i].get(), nullptr};
      return recordResult(cudaErrorGraphExecUpdateFailure);
    }
  graphExec->nodes = copyNodes(*graph);
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  if (cudaError_t sticky = stickyError())
    return sticky;
  if (!isLive(graphExec) || !isValidStream(stream))
    return recordResult(cudaErrorInvalidResourceHandle);
  return submit(stream, cudaGraphNodeTypeGraph, [nodes = graphExec->nodes] {
    for (const CUgraphNode_st &node : *nodes)
      node.work();
  });
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  if (!isLive(graphExec))
    return recordResult(cudaErrorInvalidValue);
  liveExecs().erase(graphExec);
  delete graphExec;
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (!isLive(graph))
    return recordResult(cudaErrorInvalidValue);
  liveGraphs().erase(graph);
  delete graph;
  return cudaSuccess;
}
