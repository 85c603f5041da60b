//===- MemoryHtml.h - the memory plan as a picture --------------*- C++ -*-===//
//
// OUTDIR/memory.html: one self-contained page (no network) that shows the arena over the
// train step as a timeline — which tensor occupies which byte offsets during which steps —
// where the budget goes by category, and where the estimated step time goes by op. Plain
// data in, HTML out: no MLIR here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/Analysis/OpTime.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bertc {

/// One tensor placed in the arena: it owns [offset, offset + bytes) from schedule position
/// firstStep through lastStep (inclusive). Persistent tensors (parameters, gradients,
/// optimizer state) span the whole schedule.
struct ArenaBlock {
  std::string name;     ///< "bert.encoder.layer.0.attention.self.query.weight" or "t37"
  std::string category; ///< a key of MemoryPicture::categories
  std::string shape;    ///< "[B, S, 768]" or "[768, 768]"
  std::string dtype;    ///< "f32", "bf16", "i32"
  std::string producer; ///< op that makes it ("bert.linear"), empty for parameters
  std::string origin;   ///< "model.toml:12:1" where the TOML declares it, or empty
  int64_t offset = 0;
  int64_t bytes = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};

/// Everything the page shows.
struct MemoryPicture {
  std::string title; ///< e.g. "examples/tiny/model.toml"
  /// The plan's choices: "micro-batch 16 x 2, seq 384, fp16, 8-bit AdamW state" (the
  /// precision "fp32 (TF32 GEMMs)" with --tf32).
  std::string choices;
  int64_t budgetBytes = 0;
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0;
  int64_t peakBytes = 0; ///< what the budget must cover: arena + workspace + reserve
  /// Host memory an offloaded optimizer takes (its masters and state are not in the arena
  /// drawn), and the page-locked part of it; 0 when the optimizer is on the device.
  int64_t hostBytes = 0;
  int64_t hostPinnedBytes = 0;
  /// Frozen 16-bit parameters' fp32 masters, in host memory (not in the arena drawn).
  int64_t hostFrozenMasterBytes = 0;
  /// Offloaded checkpoints' host copies (not in the arena drawn), and how many.
  int64_t hostCheckpointBytes = 0;
  int64_t offloadedCheckpoints = 0;
  int64_t hostTableBytes = 0; ///< embedding tables in host memory (PlanSummary's)
  int64_t hostTables = 0;
  int64_t peakStep = 0; ///< schedule position where the most bytes are live
  /// Bytes per category in display order ("parameters", "gradients", ..., "reserve").
  std::vector<std::pair<std::string, int64_t>> categories;
  std::vector<std::string> steps; ///< op name at each schedule position
  std::vector<ArenaBlock> blocks;
  double stepSeconds = 0;       ///< the estimated optimizer step
  std::string device;           ///< what it is estimated for: "cpu", "sm_80", ...
  std::vector<OpTime> stepTime; ///< where stepSeconds goes, longest first
};

/// The page. Names and strings are HTML-escaped; the output embeds its own CSS and script.
std::string renderMemoryHtml(const MemoryPicture &picture);

} // namespace bertc
