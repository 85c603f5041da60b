//===- AdapterOps.cpp - the LoRA adapter ops' verifiers and gradients -----===//

#include "VerifierChecks.h"

#include <cmath>

using namespace mlir;
using namespace mlir::bert;

LogicalResult ScaleOp::verify() {
  float factor = getFactor().convertToFloat();
  if (!std::isfinite(factor))
    return emitOpError() << "factor must be finite, got " << factor;
  return success();
}

// d input = dy * factor.
SmallVector<Value> ScaleOp::buildGradients(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>) {
  return {b.create<ScaleOp>(getLoc(), getType(), resultGrads[0], getFactorAttr())};
}
