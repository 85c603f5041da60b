// Internal to the CPU kernels: loops split into fixed chunks that the kernels' threads share
// (chunk_pool.h). A chunk's bounds depend on the loop's length and the chunk size only,
// never on the number of threads, and a chunk computes its outputs alone, so every kernel
// returns the same bits at any thread count. Reductions across chunks (the gradient norm)
// add the chunks' results in chunk order, after the loop.
#pragma once

#include "chunk_pool.h"

#include <algorithm>
#include <cstdint>

namespace bertc::cpu {

/// Elements one chunk of an elementwise loop covers: enough to outweigh a thread's wake-up.
constexpr int64_t kElementwiseChunk = 16384;

/// Calls body(begin, end) for consecutive chunks [begin, end) of [0, n), each `chunk` long
/// but perhaps the last, spread over the threads.
template <typename Body> void forEachChunk(int64_t n, int64_t chunk, const Body &body) {
  struct Loop {
    const Body &body;
    int64_t n, chunk;
  } loop{body, n, chunk};
  runChunks((n + chunk - 1) / chunk,
            [](const void *context, int64_t index) {
              const Loop &loop = *static_cast<const Loop *>(context);
              loop.body(index * loop.chunk, std::min(loop.n, (index + 1) * loop.chunk));
            },
            &loop);
}

} // namespace bertc::cpu
