// The CPU kernels' threads (parallel.h). One loop runs at a time:
//   1. the caller posts it (a new generation, no chunk claimed) and wakes the workers;
//   2. the caller and the workers claim chunks one at a time, each claim under the pool's
//      one lock and only for the generation the claimer was woken for, and count each chunk
//      done under the same lock;
//   3. the caller waits until every chunk is done, and only then may post the next loop, so
//      a count always belongs to the loop it is counted for.
// A worker the scheduler has not run yet claims nothing and delays nothing: on a machine
// shared with other work, a loop never waits on a thread that has not started. Workers
// sleep between loops. A chunk is a large piece of work (parallel.h), so one lock per
// claim costs little. OpenBLAS is kept to the calling thread, since the GEMMs are split
// into chunks too (linear.cpp) and two pools would fight over the cores.
#include "chunk_pool.h"

#include <cblas.h>
#include <pthread.h>

#include <algorithm>
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
      chunks_ = chunks;
      claimed_ = 0;
      done_ = 0;
      generation = ++generation_;
    }
    posted_.notify_all();
    claimAndRun(generation);
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return done_ == chunks_; });
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

  /// Runs chunks of `generation` while it is the posted loop and has unclaimed ones.
  void claimAndRun(uint64_t generation) {
    insideChunk = true;
    std::unique_lock<std::mutex> lock(mutex_);
    while (generation_ == generation && claimed_ < chunks_) {
      const int64_t chunk = claimed_++;
      const ChunkFunction function = function_;
      const void *context = context_;
      lock.unlock();
      function(context, chunk);
      lock.lock();
      if (++done_ == chunks_)
        finished_.notify_all();
    }
    insideChunk = false;
  }

  const int threads_;
  std::mutex callers_;
  std::mutex mutex_;
  std::condition_variable posted_, finished_;
  // Under mutex_: the posted loop and its progress.
  uint64_t generation_ = 0;
  ChunkFunction function_ = nullptr;
  const void *context_ = nullptr;
  int64_t chunks_ = 0, claimed_ = 0, done_ = 0;
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
