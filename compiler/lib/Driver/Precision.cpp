//===- Precision.cpp - which storage precision a plan uses ----------------===//

#include "bertc/Driver/Precision.h"

namespace bertc {

std::vector<std::string> resolvePrecision(llvm::StringRef flag, llvm::StringRef job,
                                          const DeviceModel &device) {
  llvm::StringRef requested = flag != "auto" ? flag : job;
  if (requested != "auto")
    return {requested.str()};
  llvm::StringRef half = device.halfPrecision ? device.halfPrecision : "";
  if (half.empty())
    return {"fp32"};
  return {half.str(), "fp32"};
}

} // namespace bertc
