// Internal to the CPU kernels: the pool of threads that parallel loops (parallel.h) share
// their chunks among (chunk_pool.cpp says how). OMP_NUM_THREADS sets its size, every core
// without it.
#pragma once

#include <cstdint>

namespace bertc::cpu {

/// One chunk of a parallel loop: function(context, chunk).
using ChunkFunction = void (*)(const void *context, int64_t chunk);

/// Calls function(context, c) once for every c in [0, chunks), on the pool's threads and the
/// calling one, and returns when all are done. A call from inside a chunk, or with one chunk
/// or one thread, runs the chunks in order on the calling thread.
void runChunks(int64_t chunks, ChunkFunction function, const void *context);

} // namespace bertc::cpu
