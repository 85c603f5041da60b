//===- cost_test_ops.h - bert ops parsed for the cost tests ----*- C++ -*-===//
//
// The cost tests' fixture: a few bert ops parsed as the body of one function, found by
// name, at a batch of kBatch rows.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "bertc/Analysis/StepCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

namespace bertc::test {

constexpr int64_t kBatch = 32;

/// Parses `body` as the body of a function of `arguments` and keeps the module.
class Ops {
public:
  Ops(const std::string &arguments, const std::string &body) {
    context.loadDialect<mlir::bert::BertDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(
        "func.func @f(" + arguments + ") {\n" + body + "  return\n}\n", &context);
    if (!module)
      ADD_FAILURE() << "the ops do not parse:\n" << body;
  }

  /// The first op named `name`.
  mlir::Operation *op(llvm::StringRef name) {
    mlir::Operation *found = nullptr;
    walk([&](mlir::Operation *op) {
      if (!found && op->getName().getStringRef() == name)
        found = op;
    });
    EXPECT_NE(found, nullptr) << name.str();
    return found;
  }

  /// Flops of every op named `name` on `target`.
  double flopsOf(llvm::StringRef name, int64_t seq, mlir::bert::CostTarget target) {
    double flops = 0;
    walk([&](mlir::Operation *op) {
      if (op->getName().getStringRef() == name)
        flops += bertc::estimateOpFlops(op, kBatch, seq, target);
    });
    return flops;
  }

private:
  void walk(llvm::function_ref<void(mlir::Operation *)> visit) {
    if (module)
      module->walk(visit);
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

} // namespace bertc::test
