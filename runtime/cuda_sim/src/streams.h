// Streams of the simulated device. Work runs when it is queued, so every stream is always
// idle; what is checked is that a stream handle is the default stream or a live one.
#pragma once

#include <cuda_runtime_api.h>

namespace bertc::sim {

/// True for the default stream (nullptr) and for streams created and not yet destroyed.
bool isValidStream(cudaStream_t stream);

} // namespace bertc::sim
