// A tensor shape as the checkpoint readers' error messages print it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bertc {

/// "[a,b,c]".
inline std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

} // namespace bertc
