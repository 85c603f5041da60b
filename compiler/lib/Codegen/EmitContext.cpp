//===- EmitContext.cpp - naming tensors in generated trainer code ---------===//

#include "EmitContext.h"

#include "bert/BertDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

namespace bertc {

namespace {

/// Each dimension as C++: the first dynamic one is the batch B, the second the seq S.
SmallVector<std::string> dimExprs(Value value) {
  SmallVector<std::string> dims;
  int dynamicSeen = 0;
  for (int64_t dim : cast<RankedTensorType>(value.getType()).getShape())
    dims.push_back(ShapedType::isDynamic(dim) ? (dynamicSeen++ == 0 ? "B" : "S")
                                              : std::to_string(dim));
  return dims;
}

std::string product(ArrayRef<std::string> dims) {
  return dims.empty() ? std::string("1") : llvm::join(dims, " * ");
}

/// The C++ storage type of an element type (bf16 and fp16 from half_types.h).
std::string cppType(Type elementType) {
  if (elementType.isInteger(32))
    return "int32_t";
  if (elementType.isInteger(8))
    return "uint8_t"; // a quantized weight's bytes
  if (elementType.isBF16())
    return "bf16";
  if (elementType.isF16())
    return "fp16";
  return "float";
}

std::string shapeComment(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[" << llvm::join(dimExprs(value), ", ") << "] " << type.getElementType();
  return text;
}

} // namespace

LogicalResult EmitContext::declareResults(Operation *op) {
  SmallVector<int64_t> offsets;
  std::string label = op->getName().getStringRef().str();
  if (auto param = dyn_cast<bert::ParamOp>(op)) {
    FailureOr<int64_t> offset = bert::getParamSlot(param, bert::ParamSlotKind::Value);
    if (failed(offset))
      return op->emitError("parameter has no arena slot: run -bertc-plan-buffers first");
    offsets.push_back(*offset);
    label = param.getName().str();
  } else if (op->getNumResults() > 0) {
    for (OpResult result : op->getResults()) {
      FailureOr<int64_t> offset = bert::getResultOffset(result);
      if (failed(offset))
        return op->emitError("op has no arena slots: run -bertc-plan-buffers first");
      offsets.push_back(*offset);
    }
  }
  for (auto [index, result, offset] : llvm::enumerate(op->getResults(), offsets)) {
    std::string type = cppType(cast<ShapedType>(result.getType()).getElementType());
    std::string name = namer.name(op, unsigned(index));
    std::string description = label + " " + shapeComment(result);
    // On a GPU, an offloaded tensor's host copy lies in the host mirror of the arena, and
    // the device reads an embedding table in host memory where the mirror is mapped.
    StringRef base = "arena";
    if (target == KernelTarget::Cuda && isa<bert::OffloadOp>(op))
      base = "dev.hostArena";
    if (auto param = dyn_cast<bert::ParamOp>(op);
        param && target == KernelTarget::Cuda && bert::valueInHostMemory(param))
      base = "dev.hostMapped";
    os << "  " << type << " *" << name << " = reinterpret_cast<" << type << " *>(" << base << " + "
       << offset << "); // " << description << "\n";
    ids[result] = nextId++;
    names[result] = name;
    descriptions[result] = name + " = " + description;
  }
  return success();
}

FailureOr<std::string> kernelWorkspace(Operation *op) {
  FailureOr<int64_t> offset = bert::getWorkspaceOffset(op);
  if (failed(offset))
    return op->emitError("op has no kernel workspace: run -bertc-plan-buffers");
  return "reinterpret_cast<float *>(arena + " + std::to_string(*offset) + ")";
}

std::string kernelWorkspaceOrNull(Operation *op) {
  if (!bert::hasWorkspace(op))
    return "nullptr";
  return *kernelWorkspace(op);
}

std::string lossNormalizer(float scale) {
  if (scale == 1.0f)
    return "ctx.lossNormalizer";
  return "(ctx.lossNormalizer / " + EmitContext::floatLiteral(scale) + ")";
}

std::string columnSumScratch(Operation *op) {
  return kernelWorkspaceOrNull(op) + ", " + kColumnSumTicketsArgument + ", ";
}

FailureOr<std::string> gradientSlot(Operation *op, Value param) {
  auto def = param.getDefiningOp<bert::ParamOp>();
  if (!def || !bert::hasParamSlot(def, bert::ParamSlotKind::Grad))
    return op->emitError("parameter has no gradient slot: run -bertc-plan-buffers");
  return EmitContext::paramSlot(param, bert::ParamSlotKind::Grad);
}

std::string EmitContext::call(StringRef kernel) const {
  return (target == KernelTarget::Cpu ? "  cpu::" : "  cuda::") + kernel.str() + "(";
}

StringRef EmitContext::end() const {
  return target == KernelTarget::Cpu ? ");\n" : ", dev.stream);\n";
}

std::string EmitContext::name(Value value) const { return names.lookup(value); }

std::string EmitContext::nameOrNull(Value value, Value like) const {
  if (value)
    return name(value);
  return "static_cast<const " + cppType(cast<ShapedType>(like.getType()).getElementType()) +
         " *>(nullptr)";
}

unsigned EmitContext::id(Value value) const { return ids.lookup(value); }

std::string EmitContext::describe(Value value) const { return descriptions.lookup(value); }

std::string EmitContext::bytes(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return "(" + numel(value) + ") * " + std::to_string((type.getElementTypeBitWidth() + 7) / 8);
}

std::string EmitContext::numel(Value value) { return product(dimExprs(value)); }

std::string EmitContext::paramSlot(Value param, bert::ParamSlotKind slot, StringRef element) {
  auto op = param.getDefiningOp<bert::ParamOp>();
  FailureOr<int64_t> offset = op ? bert::getParamSlot(op, slot) : FailureOr<int64_t>(failure());
  return ("reinterpret_cast<" + element + " *>(arena + " + Twine(succeeded(offset) ? *offset : -1) +
          ")")
      .str();
}

std::string EmitContext::rows(Value value) {
  SmallVector<std::string> dims = dimExprs(value);
  dims.pop_back();
  return product(dims);
}

std::string EmitContext::sampleSize(Value value) {
  return product(ArrayRef<std::string>(dimExprs(value)).drop_front());
}

std::string EmitContext::tokensPerSample(Value value) {
  return product(ArrayRef<std::string>(dimExprs(value)).drop_front().drop_back());
}

int64_t EmitContext::features(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape().back();
}

namespace {

/// The shortest decimal text that reads back as `value` (as a float when `asFloat`),
/// always with a decimal point or exponent so that C++ reads it as floating point.
std::string shortestLiteral(double value, bool asFloat) {
  char text[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    double readBack = asFloat ? double(std::strtof(text, nullptr)) : std::strtod(text, nullptr);
    if (readBack == value)
      break;
  }
  std::string literal = text;
  if (literal.find_first_of(".e") == std::string::npos)
    literal += ".0";
  return literal;
}

} // namespace

std::string EmitContext::dropoutKey(uint32_t stream) {
  return "DropoutKey{ctx.seed, uint64_t(ctx.step), " + std::to_string(stream) + "u, ctx.firstRow}";
}

std::string EmitContext::attentionHeads(int64_t heads, int64_t kvHeads, bool causal) {
  if ((kvHeads == 0 || kvHeads == heads) && !causal)
    return std::to_string(heads);
  return "AttentionHeads{" + std::to_string(heads) + ", " +
         std::to_string(kvHeads ? kvHeads : heads) + ", " + (causal ? "true" : "false") + "}";
}

std::string EmitContext::floatLiteral(float value) { return shortestLiteral(value, true) + "f"; }

std::string EmitContext::doubleLiteral(double value) { return shortestLiteral(value, false); }

LogicalResult emitOp(Operation *op, EmitContext &ctx, llvm::ArrayRef<OpEmitter> emitters) {
  for (OpEmitter emit : emitters)
    if (std::optional<LogicalResult> emitted = emit(op, ctx))
      return *emitted;
  return op->emitError() << "the " << (ctx.target == KernelTarget::Cuda ? "cuda" : "cpu")
                         << " target has no kernel for '" << op->getName() << "'";
}

} // namespace bertc
