//===- Pipeline.h - bertc's pass pipeline ------------------------*- C++ -*-===//
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace bertc {

/// The stages a module goes through; each `-emit` level stops after one.
enum class Stage { Forward, Train, Planned };

/// Adds the passes that take a module from `from` to `to` (from < to).
void buildPipeline(mlir::OpPassManager &pm, Stage from, Stage to);

/// The stage a module has reached, read from its contents.
Stage stageOf(mlir::ModuleOp module);

} // namespace bertc
