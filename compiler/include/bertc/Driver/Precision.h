//===- Precision.h - which storage precision a plan uses ---------*- C++ -*-===//
//
// The one place the precision rule lives: `--precision`, else the job's
// `[train] precision`, else ("auto") the device's 16-bit precision, bf16 from sm_80 on
// and fp16 (with loss scaling) below; the CPU target plans fp32 for auto.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Analysis/DeviceModel.h"

#include <string>
#include <vector>

namespace bertc {

/// The precisions to plan, preferred first. `flag` (--precision) and `job` ([train]
/// precision) are "auto", "fp32", "bf16" or "fp16"; the first that is not "auto" is the
/// only candidate. Both auto: the device's 16-bit precision with fp32 as the fallback a
/// fit search may take, or just fp32 on a device without one (the CPU).
std::vector<std::string> resolvePrecision(llvm::StringRef flag, llvm::StringRef job,
                                          const DeviceModel &device);

} // namespace bertc
