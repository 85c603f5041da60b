// The MLIR context of the frontend targets. Diagnostics are the expected outcome of most
// inputs, so they are dropped unread. A context keeps every location and name it has seen,
// so it is replaced every kInputsPerContext inputs to hold memory flat over long runs.
#pragma once

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace bertc::fuzz {

inline mlir::MLIRContext &quietContext() {
  constexpr int kInputsPerContext = 1000;
  static std::unique_ptr<mlir::MLIRContext> context;
  static int inputs = 0;
  if (!context || ++inputs % kInputsPerContext == 0) {
    context = std::make_unique<mlir::MLIRContext>(mlir::MLIRContext::Threading::DISABLED);
    context->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
  }
  return *context;
}

} // namespace bertc::fuzz
