// The block scheduler (block_scheduler.h). Each GPU thread is a fiber; the scheduler runs
// them in order of their index until each ends or waits:
// - at __syncthreads (syncThreadsCount): released together once every thread of the block
//   that has not exited waits there, as on the hardware;
// - at a warp collective (shuffle, ballot, __syncwarp): the last lane of the mask to arrive
//   computes every lane's result and releases them, so the exchange is atomic.
// A thread therefore never sees another's value before both reached the same point, which
// is all CUDA promises. A fiber's stack is reused by the next thread once it ends, so a
// block whose threads never wait needs one stack.
#include "block_scheduler.h"

#include "access_checks.h"
#include "fiber.h"

#include "bertc/cuda_sim/faults.h"

#include <memory>
#include <sstream>
#include <vector>

namespace bertc::sim {

namespace {

enum class State { NotStarted, Runnable, Running, AtBarrier, AtWarpCollective, Finished };
enum class WarpCollective { Shuffle, Ballot, SyncWarp };

const char *collectiveName(WarpCollective collective) {
  switch (collective) {
  case WarpCollective::Shuffle:
    return "__shfl_xor_sync";
  case WarpCollective::Ballot:
    return "__ballot_sync";
  case WarpCollective::SyncWarp:
    return "__syncwarp";
  }
  return "a warp collective";
}

struct SimThread {
  ThreadCoordinates coordinates;
  unsigned index = 0;
  State state = State::NotStarted;
  void *stackPointer = nullptr;
  std::unique_ptr<FiberStack> stack;
  // The collective the thread waits in, and its result once released.
  WarpCollective collective{};
  unsigned mask = 0;
  uint64_t bits = 0;
  int laneMask = 0, width = 0;
  uint64_t result = 0;
};

std::vector<std::unique_ptr<FiberStack>> &freeStacks() {
  static std::vector<std::unique_ptr<FiberStack>> stacks;
  return stacks;
}

std::string threadName(const SimThread &thread) {
  const uint3 &t = thread.coordinates.thread;
  std::ostringstream name;
  name << "thread (" << t.x << "," << t.y << "," << t.z << ")";
  return name.str();
}

class Block {
public:
  Block(const LaunchConfig &config, uint3 block, void (*threadBody)(const void *),
        const void *context)
      : config_(config), threadBody_(threadBody), context_(context) {
    const dim3 size = config.block;
    threads_.resize(size_t(size.x) * size.y * size.z);
    for (unsigned i = 0; i < threads_.size(); ++i) {
      SimThread &thread = threads_[i];
      thread.index = i;
      thread.coordinates = {
          {i % size.x, i / size.x % size.y, i / (size.x * size.y)}, block, size, config.grid};
    }
  }

  ~Block() {
    for (SimThread &thread : threads_)
      if (thread.stack)
        freeStacks().push_back(std::move(thread.stack));
  }

  bool run();

  // Called by the running thread.
  int arriveAtBarrier(int predicate);
  uint64_t arriveAtWarpCollective(WarpCollective collective, unsigned mask, uint64_t bits,
                                  int laneMask, int width);
  /// Raises a fault about the running thread and leaves its fiber for good.
  [[noreturn]] void failRunning(const std::string &problem);

private:
  static void threadMain(void *block);
  void resume(SimThread &thread);
  void yield() { bertc_sim_fiber_switch(&running_->stackPointer, schedulerStackPointer_); }
  bool tryReleaseWarp(SimThread &arrived);
  void releaseBarrier();
  std::string where() const;
  std::string deadlockReport() const;

  const LaunchConfig &config_;
  void (*threadBody_)(const void *);
  const void *context_;
  std::vector<SimThread> threads_;
  SimThread *running_ = nullptr;
  void *schedulerStackPointer_ = nullptr;
  size_t finished_ = 0, atBarrier_ = 0;
  bool failed_ = false;
};

Block *currentBlock = nullptr;
const ThreadCoordinates *currentCoordinates = nullptr;

std::string Block::where() const {
  const uint3 &b = threads_.front().coordinates.block;
  std::ostringstream text;
  text << "kernel " << config_.kernel << " block (" << b.x << "," << b.y << "," << b.z << ")";
  return text.str();
}

void Block::threadMain(void *block) {
  Block &self = *static_cast<Block *>(block);
  self.threadBody_(self.context_);
  self.running_->state = State::Finished;
  self.yield(); // never resumed
  __builtin_unreachable();
}

void Block::resume(SimThread &thread) {
  const bool starting = thread.state == State::NotStarted;
  if (starting) {
    auto &pool = freeStacks();
    if (pool.empty()) {
      thread.stack = std::make_unique<FiberStack>();
    } else {
      thread.stack = std::move(pool.back());
      pool.pop_back();
    }
    thread.stackPointer = thread.stack->prepare(&Block::threadMain, this);
  }
  thread.state = State::Running;
  running_ = &thread;
  currentCoordinates = &thread.coordinates;
  // A thread that waited resumes inside the simulator, whose ChecksPaused restores its
  // checks on the way back to the kernel.
  if (starting)
    checksRunThread(&thread.coordinates, thread.index, thread.stack->low(), thread.stack->high());
  bertc_sim_fiber_switch(&schedulerStackPointer_, thread.stackPointer);
  checksLeaveThread();
  running_ = nullptr;
  currentCoordinates = nullptr;
  if (thread.state == State::Finished) {
    ++finished_;
    freeStacks().push_back(std::move(thread.stack));
  }
}

bool Block::run() {
  Block *outer = currentBlock;
  currentBlock = this;
  bool ok = true;
  while (finished_ < threads_.size()) {
    bool ranAny = false;
    for (SimThread &thread : threads_) {
      if (thread.state != State::NotStarted && thread.state != State::Runnable)
        continue;
      resume(thread);
      ranAny = true;
      if (failed_)
        break;
    }
    if (failed_) {
      ok = false;
      break;
    }
    if (atBarrier_ > 0 && atBarrier_ + finished_ == threads_.size()) {
      releaseBarrier();
    } else if (!ranAny && finished_ < threads_.size()) {
      raiseDeviceFault(cudaErrorLaunchFailure, deadlockReport());
      ok = false;
      break;
    }
  }
  currentBlock = outer;
  return ok;
}

void Block::failRunning(const std::string &problem) {
  raiseDeviceFault(cudaErrorLaunchFailure, where() + " " + threadName(*running_) + ": " + problem);
  failed_ = true;
  yield(); // the scheduler abandons the block; this fiber is never resumed
  __builtin_unreachable();
}

int Block::arriveAtBarrier(int predicate) {
  SimThread &thread = *running_;
  thread.state = State::AtBarrier;
  thread.bits = predicate != 0;
  ++atBarrier_;
  yield();
  return int(thread.result);
}

void Block::releaseBarrier() {
  uint64_t count = 0;
  for (const SimThread &thread : threads_)
    if (thread.state == State::AtBarrier)
      count += thread.bits;
  for (SimThread &thread : threads_)
    if (thread.state == State::AtBarrier) {
      thread.result = count;
      thread.state = State::Runnable;
    }
  atBarrier_ = 0;
  checksBarrier();
}

uint64_t Block::arriveAtWarpCollective(WarpCollective collective, unsigned mask, uint64_t bits,
                                       int laneMask, int width) {
  SimThread &thread = *running_;
  const unsigned lane = thread.index % 32;
  if (!(mask & (1u << lane)))
    failRunning(std::string(collectiveName(collective)) + " with mask 0x" +
                [&] {
                  std::ostringstream hex;
                  hex << std::hex << mask;
                  return hex.str();
                }() +
                " that does not include the calling lane " + std::to_string(lane));
  thread.state = State::AtWarpCollective;
  thread.collective = collective;
  thread.mask = mask;
  thread.bits = bits;
  thread.laneMask = laneMask;
  thread.width = width;
  if (tryReleaseWarp(thread)) {
    thread.state = State::Running;
    return thread.result;
  }
  yield();
  return thread.result;
}

/// Completes the collective `arrived` waits in when every lane of its mask is there.
bool Block::tryReleaseWarp(SimThread &arrived) {
  const unsigned warpBase = arrived.index / 32 * 32;
  // Names the collective in a failure (built only then: this runs at every arrival).
  auto fail = [&](const std::string &problem) {
    failRunning(collectiveName(arrived.collective) + problem);
  };
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!(arrived.mask & (1u << lane)))
      continue;
    if (warpBase + lane >= threads_.size())
      fail(": the mask names lane " + std::to_string(lane) + ", which this block does not have");
    const SimThread &other = threads_[warpBase + lane];
    if (other.state == State::Finished)
      fail(": lane " + std::to_string(lane) + " of the mask has already exited");
    if (other.state != State::AtWarpCollective)
      return false;
    if (other.collective != arrived.collective || other.mask != arrived.mask)
      fail(" meets lane " + std::to_string(lane) + " in " + collectiveName(other.collective) +
           " with another mask");
  }
  uint64_t ballot = 0;
  for (unsigned lane = 0; lane < 32; ++lane)
    if ((arrived.mask & (1u << lane)) && threads_[warpBase + lane].bits)
      ballot |= 1u << lane;
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!(arrived.mask & (1u << lane)))
      continue;
    SimThread &member = threads_[warpBase + lane];
    switch (member.collective) {
    case WarpCollective::Shuffle: {
      // A source beyond the caller's group of `width` lanes gives the caller's own value.
      const unsigned source = lane ^ unsigned(member.laneMask);
      const unsigned groupEnd = (lane / unsigned(member.width) + 1) * unsigned(member.width);
      if (source >= groupEnd) {
        member.result = member.bits;
      } else if (!(arrived.mask & (1u << source))) {
        fail(": lane " + std::to_string(lane) + " reads lane " + std::to_string(source) +
             ", which is not in the mask");
      } else {
        member.result = threads_[warpBase + source].bits;
      }
      break;
    }
    case WarpCollective::Ballot:
      member.result = ballot;
      break;
    case WarpCollective::SyncWarp:
      break;
    }
    if (&member != &arrived)
      member.state = State::Runnable;
  }
  if (arrived.collective == WarpCollective::SyncWarp && arrived.mask == 0xffffffffu)
    checksWarpSynced(warpBase / 32);
  return true;
}

std::string Block::deadlockReport() const {
  std::ostringstream report;
  report << where() << ": threads wait forever:";
  size_t shown = 0;
  for (const SimThread &thread : threads_) {
    if (thread.state != State::AtBarrier && thread.state != State::AtWarpCollective)
      continue;
    if (shown++ == 4) {
      report << " ...";
      break;
    }
    report << " " << threadName(thread) << " in "
           << (thread.state == State::AtBarrier ? "__syncthreads"
                                                : collectiveName(thread.collective));
  }
  report << " (" << finished_ << " of " << threads_.size() << " threads exited)";
  return report.str();
}

Block &runningBlock() { return *currentBlock; }

} // namespace

void stopRunningThread(const std::string &problem) {
  checksLeaveThread();
  runningBlock().failRunning(problem);
}

bool runBlock(const LaunchConfig &config, uint3 block, void (*threadBody)(const void *),
              const void *context) {
  Block running(config, block, threadBody, context);
  return running.run();
}

const ThreadCoordinates &currentThread() { return *currentCoordinates; }

// The collectives run simulator code inside the calling thread: unchecked (ChecksPaused).
void syncThreads() {
  ChecksPaused paused;
  runningBlock().arriveAtBarrier(0);
}

int syncThreadsCount(int predicate) {
  ChecksPaused paused;
  return runningBlock().arriveAtBarrier(predicate);
}

uint64_t shuffleXor(unsigned mask, uint64_t bits, int laneMask, int width) {
  ChecksPaused paused;
  return runningBlock().arriveAtWarpCollective(WarpCollective::Shuffle, mask, bits, laneMask,
                                               width);
}

unsigned ballot(unsigned mask, int predicate) {
  ChecksPaused paused;
  return unsigned(
      runningBlock().arriveAtWarpCollective(WarpCollective::Ballot, mask, predicate != 0, 0, 32));
}

void syncWarp(unsigned mask) {
  ChecksPaused paused;
  runningBlock().arriveAtWarpCollective(WarpCollective::SyncWarp, mask, 0, 0, 32);
}

} // namespace bertc::sim
