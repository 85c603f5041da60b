//===- OptimizerFlags.h - how and where bertc's AdamW runs ------*- C++ -*-===//
//
// The bertc driver's flags for the optimizer's axes of the fit search: the moments' type
// (--optimizer-state), the update in the backward (--fuse-optimizer), the optimizer in
// host memory (--offload-optimizer) and the host memory it may take (--host-ram). Each
// flag pins its axis or (auto) lets the fit driver choose.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bertc {

/// The category of every bertc flag (the others hidden from --help).
llvm::cl::OptionCategory &bertcOptions();

/// A usage problem with the optimizer flags' values, if any.
std::optional<std::string> optimizerFlagsError();

/// The optimizer states the fit driver may plan, the preferred first.
std::vector<std::string> optimizerStateCandidates();
/// The update placements the fit driver may plan (in the backward or not), the preferred
/// first.
std::vector<bool> fuseOptimizerCandidates();
/// The optimizer placements the fit driver may plan (in host memory or not), the preferred
/// first.
std::vector<bool> offloadOptimizerCandidates();

/// Whether --fuse-optimizer on pins the update in the backward.
bool fuseOptimizerPinned();
/// Whether --offload-optimizer on pins the optimizer in host memory.
bool offloadOptimizerPinned();

/// The host memory an offloaded optimizer may take: --host-ram, else what the machine has
/// available now (/proc/meminfo's MemAvailable).
int64_t hostRamBudget();

} // namespace bertc
