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

LogicalResult DequantizeOp::verify() {
  QuantizedWeightAttr weight = getWeight();
  auto input = cast<RankedTensorType>(getInput().getType());
  if (input.getNumElements() != weight.getBytes())
    return emitOpError() << "a " << weight << " weight is " << weight.getBytes() << " bytes, got "
                         << input;
  if (getResult().getType().getShape() != weight.getShape())
    return emitOpError() << "result " << getResult().getType() << " must have the weight's shape";
  if (auto param = getInput().getDefiningOp<ParamOp>(); param && param.getQuantizedAttr() != weight)
    return emitOpError() << "reads parameter '" << param.getName() << "', a "
                         << param.getQuantizedAttr() << " weight, as " << weight;
  return success();
}
