//===- AttentionFlags.h - which attention kernels bertc plans ---*- C++ -*-===//
//
// --attention-head-chunk: the fused attention kernels (0), the tensor-core GEMMs over
// n heads at a time (n), or (auto) the fit driver's choice on the CUDA targets: the most
// heads at a time whose score blocks fit, if that is faster than the fused kernels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bertc {

/// A usage problem with --attention-head-chunk's value, if any.
std::optional<std::string> attentionFlagError();

/// The head chunks the fit driver may plan for a model of `heads` heads (FitRequest::
/// headChunks): the flag's value, or with auto on a CUDA target heads, heads / 2, ... 1
/// (rounded up), then the fused 0; on the CPU, 0.
std::vector<int64_t> headChunkCandidates(int64_t heads, bool cudaTarget);

} // namespace bertc
