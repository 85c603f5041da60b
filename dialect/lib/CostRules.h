//===- CostRules.h - what the ops' cost rules share -------------*- C++ -*-===//
//
// Internal to CostModel.cpp and AttentionCost.cpp: sizes at a batch, the GEMM unit of an
// operand's precision, and the constants for work that is not a multiply-add.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bert/BertDialect.h"

namespace mlir::bert::cost {

/// Rows of a [.., features] tensor at (batch, seq): all elements over the last dim.
inline double rowsAt(Value value, int64_t batch, int64_t seq) {
  auto type = cast<RankedTensorType>(value.getType());
  return numElementsAt(type, batch, seq) / double(type.getShape().back());
}

inline double features(Value value) {
  return double(cast<RankedTensorType>(value.getType()).getShape().back());
}

inline double elementsAt(Value value, int64_t batch, int64_t seq) {
  return numElementsAt(value.getType(), batch, seq);
}

inline double bytesOf(Value value, int64_t batch, int64_t seq) {
  return bytesAt(value.getType(), batch, seq);
}

/// Whether `value` is stored in 16 bits (bf16 or fp16).
inline bool isHalf(Value value) {
  Type element = cast<RankedTensorType>(value.getType()).getElementType();
  return element.isBF16() || element.isF16();
}

/// Bytes of one element of `value`.
inline double storageBytes(Value value) {
  return double(cast<RankedTensorType>(value.getType()).getElementTypeBitWidth()) / 8;
}

/// The unit a GEMM library call runs on for operands stored like `operand`, fp32 ones
/// on TF32 tensor cores when the op is marked `tf32`.
inline ComputeUnit gemmUnit(Value operand, bool tf32) {
  if (isHalf(operand))
    return ComputeUnit::HalfGemm;
  return tf32 ? ComputeUnit::Tf32Gemm : ComputeUnit::Fp32Gemm;
}

/// One [rows, in] x [in, out] product: a multiply-add per (row, in, out).
inline double gemmFlops(double rows, double in, double out) { return 2 * rows * in * out; }

/// One dropout mask bit: a Philox4x32-10 call (bertc/runtime/counter_rng.h) is ten rounds
/// of two 32x32->64-bit multiplies and about eight other integer instructions, ~100
/// instructions, and yields the decisions of eight elements (a 16-bit half-word each). Each
/// instruction takes an issue slot as a multiply-add (2 flops) does, so a decision counts
/// as 200 / 8 = 25 flops. The compare with the rate and the multiply by the kept scale are
/// in the count.
inline constexpr double kDropoutDrawFlops = 25;

} // namespace mlir::bert::cost
