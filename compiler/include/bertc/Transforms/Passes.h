//===- Passes.h - bertc's passes --------------------------------*- C++ -*-===//
#pragma once

#include "bert/BertDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace bertc {

#define GEN_PASS_DECL
#include "bertc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "bertc/Transforms/Passes.h.inc"

} // namespace bertc
