// The memory checkers (access_checks.h) and the instrumentation's entry points.
#include "access_checks.h"

#include "block_scheduler.h"
#include "launch_limits.h"
#include "shared_section.h"

#include "bertc/cuda_sim/device_memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace bertc::sim {

namespace {

/// Who last wrote and read a byte of shared memory, and in which interval between
/// barriers (an epoch; epochs never repeat, so a new block's bytes read as untouched).
/// Within an epoch, the writer's and the last reader's warp's count of __syncwarp calls
/// (warpSyncs) at the access, so a lane of that warp after a later __syncwarp is ordered
/// after it.
struct SharedByte {
  uint32_t writeEpoch = 0, readEpoch = 0;
  uint32_t writeWarpSyncs = 0, readWarpSyncs = 0;
  uint16_t writer = 0, reader = 0; ///< thread index + 1; kManyReaders when several
  uint8_t readerWarp = 0;          ///< the readers' warp; kManyWarps when several
};
constexpr uint16_t kManyReaders = 0xffff;
constexpr uint8_t kManyWarps = 0xff;
constexpr int kMaxWarps = kMaxThreadsPerBlock / kWarpSize;

/// The last write of a launch to a global address.
struct GlobalWrite {
  uint64_t block;
  uint32_t epoch;
  uint16_t thread;
};

struct Checks {
  bool enabled = [] {
    const char *value = std::getenv("BERTC_SIM_CHECKS");
    return !value || std::strcmp(value, "0") != 0;
  }();
  uint32_t epoch = 0;
  /// Per warp of the running block, its completed __syncwarp calls over the whole warp
  /// (never reset: only their order within an epoch matters).
  uint32_t warpSyncs[kMaxWarps] = {};
  uint64_t block = 0;
  uint32_t blockStartEpoch = 0;
  uintptr_t sharedBegin = reinterpret_cast<uintptr_t>(bertc::sim::sharedBegin());
  std::vector<SharedByte> shared = std::vector<SharedByte>(sharedBytes());
  DeviceRange lastAllocation; ///< where the launch's last global access was
  std::unordered_map<uintptr_t, GlobalWrite> globalWrites;
  // The running thread; coordinates is null while host code runs. checking is set while
  // an access is checked, so the checker's own accesses are not.
  const ThreadCoordinates *coordinates = nullptr;
  bool checking = false;
  uint16_t thread = 0;
  uintptr_t stackLow = 0, stackHigh = 0;
  uintptr_t arguments = 0;
  size_t argumentBytes = 0;
};

// A plain global: the checks run on every access, where a function-local static's guard
// would cost as much as the check. Kernels run only once main() has begun.
Checks checksState;

Checks &checks() { return checksState; }

// Whether a simulated thread is running on this host thread. Kernels run on the thread
// that launches them; instrumented host code that other host threads run meanwhile (a
// trainer's own worker threads) is host code, never checked as the kernel's. Initial-exec,
// so that reading it costs what reading a global does.
__attribute__((tls_model("initial-exec"))) thread_local bool kernelRunsHere = false;

std::string hex(uintptr_t address) {
  std::ostringstream text;
  text << "0x" << std::hex << address;
  return text.str();
}

std::string accessText(bool write, size_t bytes, uintptr_t address) {
  return std::string(write ? "write" : "read") + " of " + std::to_string(bytes) + " bytes at " +
         hex(address);
}

[[noreturn]] __attribute__((cold, noinline)) void reportSharedRead(uintptr_t address,
                                                                   size_t bytes) {
  stopRunningThread("shared memory " + accessText(false, bytes, address) +
                    " reads bytes no thread of the block has written");
}

[[noreturn]] __attribute__((cold, noinline)) void
reportSharedRace(uintptr_t address, size_t bytes, bool write, bool afterWrite, uint16_t other) {
  stopRunningThread("shared memory race: " + accessText(write, bytes, address) + " after " +
                    (other == kManyReaders ? std::string("other threads")
                                           : "thread index " + std::to_string(other - 1)) +
                    (afterWrite ? " wrote" : " read") + " it with no __syncthreads between");
}

bool sameHistory(const SharedByte &a, const SharedByte &b) {
  return a.writeEpoch == b.writeEpoch && a.readEpoch == b.readEpoch && a.writer == b.writer &&
         a.reader == b.reader && a.writeWarpSyncs == b.writeWarpSyncs &&
         a.readWarpSyncs == b.readWarpSyncs && a.readerWarp == b.readerWarp;
}

/// Whether an access of warp `warp` when it had `syncs` __syncwarp calls behind it is
/// ordered before the running thread's (of warp `ownWarp`): a __syncwarp of their warp since.
bool warpOrdered(const Checks &state, unsigned warp, uint32_t syncs, unsigned ownWarp) {
  return warp == ownWarp && state.warpSyncs[ownWarp] > syncs;
}

/// Checks one byte of a shared access of `bytes` at `address` and records it; returns
/// whether its history changed (a re-read in the same interval changes nothing).
bool checkSharedByte(const Checks &state, SharedByte &byte, uint16_t self, uintptr_t address,
                     size_t bytes, bool write) {
  const unsigned warp = (self - 1u) / 32u;
  const uint32_t syncs = state.warpSyncs[warp];
  if (!write && byte.writeEpoch <= state.blockStartEpoch)
    reportSharedRead(address, bytes);
  if (byte.writeEpoch == state.epoch && byte.writer != self &&
      !warpOrdered(state, (byte.writer - 1u) / 32u, byte.writeWarpSyncs, warp))
    reportSharedRace(address, bytes, write, true, byte.writer);
  if (write) {
    if (byte.readEpoch == state.epoch && byte.reader != self &&
        !warpOrdered(state, byte.readerWarp, byte.readWarpSyncs, warp))
      reportSharedRace(address, bytes, write, false, byte.reader);
    byte.writer = self;
    byte.writeEpoch = state.epoch;
    byte.writeWarpSyncs = syncs;
    return true;
  }
  if (byte.readEpoch != state.epoch) {
    byte.reader = self;
    byte.readerWarp = uint8_t(warp);
    byte.readEpoch = state.epoch;
    byte.readWarpSyncs = syncs;
    return true;
  }
  const SharedByte before = byte;
  if (byte.reader != self)
    byte.reader = kManyReaders;
  if (byte.readerWarp != warp)
    byte.readerWarp = kManyWarps;
  byte.readWarpSyncs = syncs;
  return !sameHistory(before, byte);
}

void checkShared(Checks &state, uintptr_t address, size_t bytes, bool write) {
  SharedByte *shadow = state.shared.data() + (address - state.sharedBegin);
  const uint16_t self = uint16_t(state.thread + 1);
  // The bytes of a value written and read whole share one history, and the same access
  // gives them the same new one: check the first and copy it to the rest.
  if (std::all_of(shadow + 1, shadow + bytes,
                  [&](const SharedByte &byte) { return sameHistory(byte, shadow[0]); })) {
    if (checkSharedByte(state, shadow[0], self, address, bytes, write))
      std::fill(shadow + 1, shadow + bytes, shadow[0]);
    return;
  }
  for (size_t i = 0; i < bytes; ++i)
    checkSharedByte(state, shadow[i], self, address, bytes, write);
}

void checkGlobalWrite(Checks &state, uintptr_t address, size_t bytes) {
  const GlobalWrite write{state.block, state.epoch, state.thread};
  auto [known, inserted] = state.globalWrites.try_emplace(address, write);
  if (inserted)
    return;
  const GlobalWrite previous = known->second;
  const bool otherBlock = previous.block != write.block;
  if (otherBlock || (previous.thread != write.thread && previous.epoch == write.epoch))
    stopRunningThread(
        "global memory race: " + accessText(true, bytes, address) + " after thread index " +
        std::to_string(previous.thread) +
        (otherBlock ? " of block " + std::to_string(previous.block) + " (blocks are not ordered)"
                    : " wrote it with no __syncthreads between"));
  known->second = write;
}

[[noreturn]] __attribute__((cold, noinline)) void reportOutOfBounds(uintptr_t address, size_t bytes,
                                                                    bool write) {
  stopRunningThread("out-of-bounds " + accessText(write, bytes, address) +
                    ": not in any device allocation, shared memory or the thread's stack");
}

bool within(uintptr_t address, size_t bytes, uintptr_t begin, uintptr_t end) {
  return address >= begin && address + bytes <= end;
}

void checkAccessOfThread(Checks &state, uintptr_t address, size_t bytes, bool write) {
  if (within(address, bytes, state.sharedBegin, state.sharedBegin + state.shared.size()))
    return checkShared(state, address, bytes, write);
  if (!within(address, bytes, state.lastAllocation.begin, state.lastAllocation.end)) {
    const auto coordinates = reinterpret_cast<uintptr_t>(state.coordinates);
    if (within(address, bytes, state.stackLow, state.stackHigh) ||
        (!write && within(address, bytes, coordinates, coordinates + sizeof(ThreadCoordinates))) ||
        (!write && within(address, bytes, state.arguments, state.arguments + state.argumentBytes)))
      return;
    state.lastAllocation = deviceAllocationAt(reinterpret_cast<const void *>(address));
    if (!within(address, bytes, state.lastAllocation.begin, state.lastAllocation.end) &&
        !isMappedHostRange(reinterpret_cast<const void *>(address), bytes))
      reportOutOfBounds(address, bytes, write);
  }
  if (write)
    checkGlobalWrite(state, address, bytes);
}

void checkAccess(uintptr_t address, size_t bytes, bool write) {
  Checks &state = checks();
  if (!kernelRunsHere || !state.coordinates || state.checking)
    return;
  state.checking = true;
  checkAccessOfThread(state, address, bytes, write);
  state.checking = false;
}

} // namespace

bool accessChecksEnabled() { return checks().enabled; }

void checkAtomicAccess(const void *address, size_t bytes) {
  checkAccess(reinterpret_cast<uintptr_t>(address), bytes, /*write=*/false);
}

void checksBeginLaunch(const void *arguments, size_t argumentBytes) {
  Checks &state = checks();
  state.globalWrites.clear();
  state.lastAllocation = {};
  state.arguments = reinterpret_cast<uintptr_t>(arguments);
  state.argumentBytes = argumentBytes;
}

void checksBeginBlock(uint64_t blockIndex) {
  Checks &state = checks();
  state.block = blockIndex;
  state.blockStartEpoch = state.epoch;
  state.epoch += 1;
}

void checksBarrier() { checks().epoch += 1; }

void checksWarpSynced(unsigned warp) { checks().warpSyncs[warp] += 1; }

void checksRunThread(const ThreadCoordinates *coordinates, unsigned index, const void *stackLow,
                     const void *stackHigh) {
  Checks &state = checks();
  if (!state.enabled)
    return;
  state.coordinates = coordinates;
  state.checking = false;
  kernelRunsHere = true;
  state.thread = uint16_t(index);
  state.stackLow = reinterpret_cast<uintptr_t>(stackLow);
  state.stackHigh = reinterpret_cast<uintptr_t>(stackHigh);
}

void checksLeaveThread() {
  checks().coordinates = nullptr;
  checks().checking = false;
  kernelRunsHere = false;
}

ChecksPaused::ChecksPaused() {
  Checks &state = checks();
  coordinates_ = state.coordinates;
  index_ = state.thread;
  stackLow_ = reinterpret_cast<const void *>(state.stackLow);
  stackHigh_ = reinterpret_cast<const void *>(state.stackHigh);
  state.coordinates = nullptr;
  kernelRunsHere = false;
}

ChecksPaused::~ChecksPaused() {
  if (coordinates_)
    checksRunThread(coordinates_, index_, stackLow_, stackHigh_);
}

} // namespace bertc::sim

// The outlined instrumentation's entry points (GCC's and Clang's kernel-address mode).
#define BERTC_SIM_ACCESS_HOOKS(size)                                                               \
  extern "C" void __asan_load##size##_noabort(uintptr_t address) {                                 \
    bertc::sim::checkAccess(address, size, false);                                                 \
  }                                                                                                \
  extern "C" void __asan_store##size##_noabort(uintptr_t address) {                                \
    bertc::sim::checkAccess(address, size, true);                                                  \
  }
BERTC_SIM_ACCESS_HOOKS(1)
BERTC_SIM_ACCESS_HOOKS(2)
BERTC_SIM_ACCESS_HOOKS(4)
BERTC_SIM_ACCESS_HOOKS(8)
BERTC_SIM_ACCESS_HOOKS(16)
#undef BERTC_SIM_ACCESS_HOOKS

extern "C" void __asan_loadN_noabort(uintptr_t address, size_t bytes) {
  bertc::sim::checkAccess(address, bytes, false);
}
extern "C" void __asan_storeN_noabort(uintptr_t address, size_t bytes) {
  bertc::sim::checkAccess(address, bytes, true);
}
// Called before a noreturn call (a throw) in instrumented host code: nothing to do here.
extern "C" void __asan_handle_no_return() {}
// Bracket a translation unit's dynamic initializers (init-order checking): nothing to do.
extern "C" void __asan_before_dynamic_init(const char *) {}
extern "C" void __asan_after_dynamic_init() {}
