//===- LocalGpu.h - the GPU of the machine bertc runs on --------*- C++ -*-===//
//
// Which GPU this machine has, as nvidia-smi reports it, so that a trainer built for
// --target cuda without --arch is planned for the GPU it will most likely run on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace bertc {

/// A GPU as nvidia-smi names it.
struct LocalGpu {
  std::string name;
  int capability; ///< compute capability x 10 (8.6: 86)
  int gpus = 1;   ///< how many GPUs the machine has, this one the oldest
};

/// The oldest GPU of `nvidiaSmiOutput`, nvidia-smi's
/// "--query-gpu=name,compute_cap --format=csv,noheader" ("Tesla T4, 7.5" a line; other
/// lines, such as warnings, are passed over), if it lists any.
std::optional<LocalGpu> parseNvidiaSmiGpu(llvm::StringRef nvidiaSmiOutput);

/// This machine's oldest GPU (a trainer planned for it runs on each): nvidia-smi on PATH,
/// run once; none without it, or when it fails or lists no GPU.
std::optional<LocalGpu> localGpu();

/// The newest --arch bertc knows that a GPU of compute capability `capability` runs (a newer
/// GPU gets the newest known), or none for a GPU older than all of them.
std::optional<std::string> archForCapability(int capability);

} // namespace bertc
