// The bound on a rotary embedding's inverse frequencies (bert.rope's inv_freq) that the
// dialect's verifier enforces and the CUDA launchers rely on: they pass the frequencies to
// the kernel by value (a kernel parameter of at most 4 KiB), not through device memory.
#pragma once

#include <cstdint>

namespace bertc {

/// The most inverse frequencies of one bert.rope: head_dim 512.
inline constexpr int64_t kRopeMaxFrequencies = 256;

} // namespace bertc
