//===- StepMemory.h - what occupies the arena, step by step -----*- C++ -*-===//
//
// Reads a planned module back as people think about it: every tensor of @micro_step
// with its name, category, shape, TOML origin, arena bytes and lifetime; every parameter
// with its slots; and the position where the most bytes are live. The memory report
// (--explain, memory.html, plan.json) and the fit suggestions are built on it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bert/Placement.h"
#include "bertc/Analysis/TrainModule.h"

#include <string>
#include <vector>

namespace bertc {

/// One tensor of the activation space of a planned @micro_step.
struct PlannedTensor {
  std::string name;     ///< "bert.encoder.layer.0.attention.self.query" (+ "/grad" in the backward)
  std::string category; ///< "activations" (kept for the backward) or "temporaries"
  std::string shape;    ///< "[B, S, 768]" with B, S the micro-batch and seq bounds as numbers
  std::string dtype;
  std::string producer; ///< the op that makes it, "bert.linear"
  std::string origin;   ///< "model.toml:12:1", or "" without a file location
  int64_t offset = 0;
  int64_t bytes = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};

/// A parameter and what it costs: its value (in its storage type), the fp32 master of a
/// 16-bit one, and for a trainable one its fp32 gradient and two fp32 AdamW moments.
struct PlannedParam {
  std::string name;
  std::string group;
  std::string shape;
  std::string origin;
  int64_t bytes = 0;      ///< the value alone
  int64_t totalBytes = 0; ///< value, master, gradient and AdamW state on the device
  /// One of its arena slots: its value, its master when 16-bit, for a trainable one its
  /// gradient and AdamW moments and, with 8-bit state (whose moments are u8 codes), their
  /// absmaxes.
  struct Slot {
    mlir::bert::ParamSlotKind kind;
    int64_t offset;
    int64_t bytes;
    std::string dtype; ///< "f32", "bf16", "f16" or "u8"
  };
  std::vector<Slot> slots;
};

/// The activation space of a planned @micro_step over its schedule.
struct StepMemory {
  std::vector<PlannedParam> params; ///< largest totalBytes first
  std::vector<PlannedTensor> tensors;
  std::vector<std::string> steps; ///< op name at each position
  int64_t peakStep = 0;           ///< first position where the most bytes are live
  int64_t peakLiveBytes = 0;      ///< tensor bytes live there (in-place chains once)
  int64_t savedBytesAtPeak = 0;   ///< of which kept for the backward
};

/// The name and TOML position a location carries: NameLoc("name", file:line:col).
void describeLocation(mlir::Location loc, std::string &name, std::string &origin);

/// Reads the plan of `module` (after -bertc-plan-buffers).
mlir::FailureOr<StepMemory> analyzeStepMemory(mlir::ModuleOp module);

/// Tensors live at `step`, largest first.
std::vector<const PlannedTensor *> liveAt(const StepMemory &memory, int64_t step);

} // namespace bertc
