//===- OpTime.h - one op's share of the estimated step ------------*- C++ -*-===//
//
// Plain data (no MLIR), so that the reports which show it (plan.json, --explain,
// memory.html) can take it as it is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/abi/trainer.h"

#include <string>

namespace bertc {

/// Every run of the ops of one name in an optimizer step, as the step estimate prices it.
struct OpTime {
  std::string op;      ///< "bert.linear_grad_weight", or kTimedGradientZeroing, kHostOptimizer
  double runs = 0;     ///< of the op per optimizer step
  double launches = 0; ///< kernel launches per optimizer step (shared launches count 0)
  double flops = 0;
  double seconds = 0;
};

/// The entry for what the step waits for of an optimizer offloaded to the host.
inline constexpr const char *kHostOptimizer = "optimizer on the host (AdamW and PCIe)";

} // namespace bertc
