//===- EmitPlanCheck.cpp - the plan checker's hooks -----------------------===//
//
// The plan-check ops (-bertc-instrument-plan-checks) become calls of the hooks of
// bertc/runtime/plan_check.h, which do nothing unless the trainer runs with --plan-check.
// A tensor is known to the checker by its id (EmitContext::id) and described by its
// slot's name, shape and type.
//
//===----------------------------------------------------------------------===//

#include "CpuEmitters.h"

#include "bert/BertDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

std::optional<LogicalResult> emitPlanCheckOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](PlanCheckReadOp read) {
        Value tensor = read.getTensor();
        os << "  planCheckRead(ctx, " << ctx.name(tensor) << ", " << EmitContext::bytes(tensor)
           << ", " << ctx.id(tensor) << ", \"" << read.getReader() << "\", \""
           << ctx.describe(tensor) << "\");\n";
        return success();
      })
      .Case([&](PlanCheckDefineOp define) {
        Value tensor = define.getTensor();
        os << "  planCheckDefine(ctx, " << ctx.name(tensor) << ", " << EmitContext::bytes(tensor)
           << ", " << ctx.id(tensor) << ", \"" << ctx.name(tensor) << "\");\n";
        return success();
      })
      .Case([&](PlanCheckReleaseOp release) {
        Value tensor = release.getTensor();
        os << "  planCheckRelease(ctx, " << ctx.name(tensor) << ", " << EmitContext::bytes(tensor)
           << ", " << ctx.id(tensor) << ");\n";
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
