// The CPU kernels' threads (parallel.h). One loop runs at a time:
//   1. the caller posts it (a new generation, the chunk cursor at 0) and wakes the workers;
//   2. the caller and the workers claim chunks one at a time from the cursor, which holds the
//      generation beside the next chunk, so a worker still holding an older generation can
//      never claim one;
//   3. when no chunk is left, the caller waits for the claimed ones to be done.
// A worker the scheduler has not run yet claims nothing and delays nothing: on a machine
// shared with other work, a loop never waits on a thread that has not started. Workers
// sleep between loops. OpenBLAS is kept to the calling thread, since the GEMMs are split
// into chunks too (linear.cpp) and two pools would fight over the cores.
#include "chunk_pool.h"

#include <cblas.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>

namespace bertc::cpu {

namespace {
thread_local bool insideChunk = false;

/// Threads the kernels use: OMP_NUM_THREADS when it is a positive number, else every core.
int configuredThreads() {
  if (const char *value = std::getenv("OMP_NUM_THREADS")) {
    char *end = nullptr;
    const long threads = std::strtol(value, &end, 10);
    if (end != value && *end == '\0' && threads > 0)
      return int(std::min(threads, 1024L));
  }
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

class ChunkPool {
public:
  ChunkPool() : threads_(configuredThreads()) {
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(1);
#endif
    for (int worker = 1; worker < threads_; ++worker) {
      pthread_t thread;
      if (pthread_create(&thread, nullptr, &ChunkPool::workerMain, this) != 0)
        break; // fewer workers: the caller claims what they would have
      pthread_detach(thread);
    }
  }

  int threads() const { return threads_; }

  void run(int64_t chunks, ChunkFunction function, const void *context) {
    std::lock_guard<std::mutex> oneLoop(callers_);
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      function_ = function;
      context_ = context;
      chunks_.store(chunks);
      done_.store(0);
      generation = ++generation_;
      cursor_.store(generation << 32);
    }
    posted_.notify_all();
    claimAndRun(generation);
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return done_.load() == chunks; });
  }

private:
  static void *workerMain(void *pool) {
    static_cast<ChunkPool *>(pool)->work();
    return nullptr;
  }

  [[noreturn]] void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        posted_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
      }
      claimAndRun(seen);
    }
  }

  /// Runs chunks of `generation` while there are unclaimed ones.
  void claimAndRun(uint64_t generation) {
    insideChunk = true;
    for (;;) {
      uint64_t cursor = cursor_.load();
      do {
        if (cursor >> 32 != generation || int64_t(cursor & 0xffffffffu) >= chunks_.load()) {
          insideChunk = false;
          return;
        }
      } while (!cursor_.compare_exchange_weak(cursor, cursor + 1));
      function_(context_, int64_t(cursor & 0xffffffffu));
      if (done_.fetch_add(1) + 1 == chunks_.load()) {
        std::lock_guard<std::mutex> lock(mutex_);
        finished_.notify_all();
      }
    }
  }

  const int threads_;
  std::mutex callers_;
  std::mutex mutex_;
  std::condition_variable posted_, finished_;
  uint64_t generation_ = 0; // under mutex_
  ChunkFunction function_ = nullptr;
  const void *context_ = nullptr;
  std::atomic<int64_t> chunks_{0}, done_{0};
  std::atomic<uint64_t> cursor_{0}; // generation << 32 | next chunk
};

/// The pool, built at first use in static storage (no operator new) and never destroyed, as
/// its workers never exit.
ChunkPool &pool() {
  alignas(ChunkPool) static unsigned char storage[sizeof(ChunkPool)];
  static ChunkPool *instance = new (storage) ChunkPool;
  return *instance;
}
} // namespace

void runChunks(int64_t chunks, ChunkFunction function, const void *context) {
  if (chunks > 1 && !insideChunk && pool().threads() > 1) {
    pool().run(chunks, function, context);
    return;
  }
  for (int64_t chunk = 0; chunk < chunks; ++chunk)
    function(context, chunk);
}

} // namespace bertc::cpu
