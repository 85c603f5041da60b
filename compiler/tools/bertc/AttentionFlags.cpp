//===- AttentionFlags.cpp - which attention kernels bertc plans -----------===//

#include "AttentionFlags.h"

#include "OptimizerFlags.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"

namespace cl = llvm::cl;

namespace bertc {

namespace {

cl::opt<std::string> attentionHeadChunk(
    "attention-head-chunk",
    cl::desc("how attention runs: auto (default: on the cuda targets, the most heads at a "
             "time whose [seq, seq] scores fit the budget, as tensor-core GEMMs, or the fused "
             "kernels where those are faster or nothing else fits; fused on the CPU), 0 (the "
             "fused kernels, no [seq, seq] matrix) or N (GEMMs over N heads at a time)"),
    cl::init("auto"), cl::cat(bertcOptions()));

/// --attention-head-chunk's number, when it is one.
std::optional<int64_t> pinnedHeadChunk() {
  int64_t value = 0;
  if (attentionHeadChunk == "auto" || !llvm::to_integer(attentionHeadChunk.getValue(), value, 10) ||
      value < 0)
    return std::nullopt;
  return value;
}

} // namespace

std::optional<std::string> attentionFlagError() {
  if (attentionHeadChunk == "auto" || pinnedHeadChunk())
    return std::nullopt;
  return "--attention-head-chunk '" + attentionHeadChunk +
         "': expected auto, 0 (fused) or a number of heads";
}

std::vector<int64_t> headChunkCandidates(int64_t heads, bool cudaTarget) {
  if (std::optional<int64_t> pinned = pinnedHeadChunk())
    return {std::min(*pinned, heads)};
  if (!cudaTarget)
    return {0};
  std::vector<int64_t> chunks;
  for (int64_t chunk = heads; chunk > 1; chunk -= chunk / 2) // halved, rounded up
    chunks.push_back(chunk);
  chunks.push_back(1);
  chunks.push_back(0);
  return chunks;
}

} // namespace bertc
