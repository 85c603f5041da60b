//===- ExitCodes.h - what bertc's exit status means -------------*- C++ -*-===//
//
// 0 ok, 1 invalid input, 2 usage, 3 budget cannot be met, 4 trainer build.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace bertc {

enum ExitCode { kOk = 0, kInvalidInput = 1, kUsage = 2, kOverBudget = 3, kBuildFailed = 4 };

} // namespace bertc
