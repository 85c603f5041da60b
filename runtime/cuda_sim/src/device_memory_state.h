// The simulated device's capacity, for its description (cudaGetDeviceProperties).
#pragma once

#include <cstddef>

namespace bertc::sim {

size_t deviceCapacity();

} // namespace bertc::sim
