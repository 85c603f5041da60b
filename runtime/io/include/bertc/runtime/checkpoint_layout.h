// How checkpoints lay out a parameter: as the arena holds it, or transposed
// (ParamSlot::checkpointTransposed: transformers' Conv1D weights, [in, out] in checkpoints
// and [out, in] in the step). Loading and saving go through these.
#pragma once

#include "bertc/abi/trainer.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bertc {

/// The parameter's shape in checkpoints: its own, or reversed when checkpointTransposed.
inline std::vector<int64_t> checkpointShape(const ParamSlot &param) {
  std::vector<int64_t> shape(param.shape, param.shape + param.rank);
  if (param.checkpointTransposed)
    std::reverse(shape.begin(), shape.end());
  return shape;
}

/// Writes the [cols, rows] transpose of the row-major [rows, cols] matrix `from` to `to`.
template <typename T> void transposeMatrix(const T *from, int64_t rows, int64_t cols, T *to) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      to[c * rows + r] = from[r * cols + c];
}

} // namespace bertc
